/* SPDX-License-Identifier: MIT */
/*
 * test_spec_validation.c — the three spec parsers (tree spec, per-child
 * script, fault spec) reject what they cannot honour, with one exact
 * message, before anything is built or forked (issue 8, item 4).
 *
 * Every case is a must-fail probe of a parser: it passes only when the
 * spec is refused with the message asserted here, word for word. Nothing
 * in this suite forks: a tree at the limit is built NEW and freed by the
 * case's teardown.
 */
#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>

#include "rt_helpers.h"
#include "rt_table.h"

/* mpfw_tree_new() refuses `spec` with `rc` and exactly `msg`; nothing is
   built: the case owns no new tree. */
static void expect_spec_error(const char *spec, int rc, const char *msg)
{
    mpfw_tree *t = NULL;
    unsigned trees = mpfw_open_trees();

    assert_int_equal(mpfw_tree_new(&t, spec, NULL), rc);
    assert_string_equal(mpfw_last_error(), msg);
    assert_null(t);
    assert_int_equal(mpfw_open_trees(), trees);
}

/* worker_options_validate() refuses `o` with exactly `msg`, and so does
   worker_new() (nothing is created). */
static void expect_options_error(const worker_options *o, const char *msg)
{
    char m[512];
    worker *w = NULL;

    assert_int_equal(worker_options_validate(o, m, sizeof(m)), -EINVAL);
    assert_string_equal(m, msg);
    assert_int_equal(worker_new(&w, o), -EINVAL);
    assert_null(w);
}

/* ... and the fault spec `faults`. */
static void expect_faults_error(const char *faults, const char *msg)
{
    worker_options o = WORKER_OPTIONS_INIT;

    o.faults = faults;
    expect_options_error(&o, msg);
}

/* ---- refusals, one shape: text -> rc -> exact message ----
   A row is a case: a list of probes of one parser, each refused with
   exactly its message. A tree spec goes to mpfw_tree_new() (refused with
   `rc`, nothing built); a fault spec goes to worker_options_validate()
   and worker_new() as the options' faults (refused with -EINVAL, nothing
   created). A list ends at a probe without text. */
struct refusal {
    const char *text;
    const char *msg;
    int rc;
};

enum parser { TREE_SPEC, FAULT_SPEC };

struct refusal_case {
    /* cppcheck-suppress unusedStructMember ; rt_table.h reads it */
    const char *name;
    enum parser parser;
    const struct refusal *probes;
};
RT_ROW_NAME_FIRST(struct refusal_case);

static const struct refusal_case refusal_cases[] = {
    /* tree spec: totals */
    /* The reproducer: 48 bytes that used to build 69,905 workers
       (3.4 GB) are refused at once, naming the total and the limit. */
    { "oversized_tree_spec_is_refused_before_anything_is_built", TREE_SPEC,
      (const struct refusal[]){
          { "L7{L6{L5{L4{L3{sub*64,chip*64}*16}*16}*16}*16}",
            "spec 'L7{L6{L5{L4{L3{sub*64,chip*64}*16}*16}*16}*16}' describes "
            "8,458,512 processes; the limit is 1,024 (MPFW_SPEC_MAX_PROCESSES)",
            -E2BIG },
          /* Cheap to build (273 workers) but 33,040 processes at init. */
          { "L5{L4{L3{sub*64,chip*64}*16}*16}",
            "spec 'L5{L4{L3{sub*64,chip*64}*16}*16}' describes 33,040 "
            "processes; the limit is 1,024 (MPFW_SPEC_MAX_PROCESSES)",
            -E2BIG },
          { NULL, NULL, 0 } } },
    /* tree spec: numbers and shape */
    { "tree_spec_count_out_of_range_is_an_error_not_a_wrap", TREE_SPEC,
      (const struct refusal[]){
          { "L3{chip*99999999999999}",
            "spec 'L3{chip*99999999999999}' at offset 8: chip count "
            "99999999999999 is out of range 1..64",
            -EINVAL },
          /* 2^64 + 1: wraps to 1 in 64-bit arithmetic. */
          { "L3{sub*18446744073709551617}",
            "spec 'L3{sub*18446744073709551617}' at offset 7: sub count "
            "18446744073709551617 is out of range 1..64",
            -EINVAL },
          { "L3{sub*0}",
            "spec 'L3{sub*0}' at offset 7: sub count 0 is out of range 1..64",
            -EINVAL },
          { "L3{sub*65}",
            "spec 'L3{sub*65}' at offset 7: sub count 65 is out of range 1..64",
            -EINVAL },
          { "L4{L3*17}",
            "spec 'L4{L3*17}' at offset 6: L3 count 17 is out of range 1..16",
            -EINVAL },
          { "L3{sub*}",
            "spec 'L3{sub*}' at offset 7: expected a count after '*'",
            -EINVAL },
          { "L3{sub*+2}",
            "spec 'L3{sub*+2}' at offset 7: expected a count after '*'",
            -EINVAL },
          { NULL, NULL, 0 } } },
    { "tree_spec_children_of_one_node_are_limited", TREE_SPEC,
      (const struct refusal[]){
          { "L3{sub*40,sub*40}",
            "spec 'L3{sub*40,sub*40}' at offset 10: 80 subs in one L3; the "
            "limit is 64 (WORKER_MAX_SUBS)",
            -EINVAL },
          { "L3{chip*64,sub,chip}",
            "spec 'L3{chip*64,sub,chip}' at offset 15: 65 chips in one L3; the "
            "limit is 64 (WORKER_MAX_CHIPS)",
            -EINVAL },
          { "L4{L3*10,L3*10}",
            "spec 'L4{L3*10,L3*10}' at offset 9: 20 next-level children in one "
            "L4; the limit is 16 (WORKER_MAX_NEXT)",
            -EINVAL },
          { "L4{chip}",
            "spec 'L4{chip}' at offset 3: chips (device ids) are rejected at "
            "level >= 4 (level 4)",
            -EINVAL },
          { NULL, NULL, 0 } } },
    { "tree_spec_levels_are_checked", TREE_SPEC,
      (const struct refusal[]){
          { "L8", "spec 'L8' at offset 0: level L8 is out of range L3..L7",
            -EINVAL },
          { "L10{sub}",
            "spec 'L10{sub}' at offset 0: level L10 is out of range L3..L7",
            -EINVAL },
          { "L4{L4}",
            "spec 'L4{L4}' at offset 3: a next-level child of an L4 must be an "
            "L3, not an L4",
            -EINVAL },
          { "L3{L3}",
            "spec 'L3{L3}' at offset 3: an L3 has sub and chip children only, "
            "not an L3",
            -EINVAL },
          { "L3*2",
            "spec 'L3*2' at offset 2: trailing text after the root node",
            -EINVAL },
          { NULL, NULL, 0 } } },
    /* per-child scripts (worker_script_parse, through the tree spec) */
    { "script_numbers_out_of_range_are_errors", TREE_SPEC,
      (const struct refusal[]){
          { "L3{sub:exit(256)}",
            "spec 'L3{sub:exit(256)}' at offset 7: script 'exit(256)': exit "
            "code 256 is out of range 0..255",
            -EINVAL },
          { "L3{sub:exit(99999999999999999999)}",
            "spec 'L3{sub:exit(99999999999999999999)}' at offset 7: script "
            "'exit(99999999999999999999)': exit code 99999999999999999999 is "
            "out of range 0..255",
            -EINVAL },
          { "L3{sub:slow_fail(3600001)}",
            "spec 'L3{sub:slow_fail(3600001)}' at offset 7: script "
            "'slow_fail(3600001)': delay 3600001 ms is out of range 0..3600000",
            -EINVAL },
          /* strtol() would take a sign and leading blanks: the spec does not. */
          { "L3{sub:exit(+5)}",
            "spec 'L3{sub:exit(+5)}' at offset 7: script 'exit(+5)': '+5' is "
            "not a decimal number",
            -EINVAL },
          { "L3{sub:exit( 5)}",
            "spec 'L3{sub:exit( 5)}' at offset 7: script 'exit( 5)': ' 5' is "
            "not a decimal number",
            -EINVAL },
          { NULL, NULL, 0 } } },
    { "script_shape_errors_say_what_is_wrong", TREE_SPEC,
      (const struct refusal[]){
          { "L3{sub:hang(1)}",
            "spec 'L3{sub:hang(1)}' at offset 7: script 'hang(1)': hang takes "
            "no argument",
            -EINVAL },
          { "L3{sub:exit}",
            "spec 'L3{sub:exit}' at offset 7: script 'exit': exit needs a "
            "number in parentheses",
            -EINVAL },
          { "L3{sub:explode}",
            "spec 'L3{sub:explode}' at offset 7: script 'explode' is unknown "
            "(ok, fail[(msg)], hang, slow_fail(ms), exit(n), crash, "
            "ignore_sigterm, fork_grandchild)",
            -EINVAL },
          { "L3{sub:fail(oops}",
            "spec 'L3{sub:fail(oops}' at offset 11: missing ')' in script",
            -EINVAL },
          { NULL, NULL, 0 } } },
    /* fault specs (worker_options.faults and WORKER_FAULTS) */
    { "fault_numbers_are_range_checked", FAULT_SPEC,
      (const struct refusal[]){
          { "root:setup_begin=delay(3600001)",
            "faults: fault action 'delay(3600001)': bad number 3600001, delay "
            "must be 0..3600000 ms",
            -EINVAL },
          { "root:setup_begin=delay(99999999999999999999999)",
            "faults: fault action 'delay(99999999999999999999999)': bad number "
            "99999999999999999999999, delay must be 0..3600000 ms",
            -EINVAL },
          /* strtol() took a sign and leading blanks ('+' separates actions). */
          { "root:setup_begin=delay(-0)",
            "faults: fault action 'delay(-0)': '-0' is not a decimal number",
            -EINVAL },
          { "root:setup_begin=delay( 5)",
            "faults: fault action 'delay( 5)': ' 5' is not a decimal number",
            -EINVAL },
          { "chip.0:setup_begin=exit(256)",
            "faults: fault action 'exit(256)': bad number 256, exit code must "
            "be 0..255",
            -EINVAL },
          { "chip.0:setup_begin=signal_parent(65)",
            "faults: fault action 'signal_parent(65)': bad number 65, signal "
            "must be 1..64",
            -EINVAL },
          { "chip.0:setup_begin=gate_wait(64)",
            "faults: fault action 'gate_wait(64)': bad number 64, gate must be "
            "0..63",
            -EINVAL },
          { NULL, NULL, 0 } } },
    { "fault_entry_shapes_are_checked", FAULT_SPEC,
      (const struct refusal[]){
          { "root:setup_begin=fail(x",
            "faults: fault action 'fail(x': missing ')'", -EINVAL },
          { "root:setup_begin=hang(3)",
            "faults: fault action 'hang': takes no argument", -EINVAL },
          { "root:setup_begin=delay",
            "faults: fault action 'delay': needs an argument", -EINVAL },
          { "root:setup_begin=signal_parent(0)",
            "faults: fault action 'signal_parent(0)': bad number 0, signal "
            "must be 1..64",
            -EINVAL },
          { "root setup_begin",
            "faults: fault entry 'root setup_begin': want ROLE:POINT=ACTION",
            -EINVAL },
          { ":setup_begin=hang",
            "faults: fault entry ':setup_begin=hang': want ROLE:POINT=ACTION",
            -EINVAL },
          { "root:setup_begin=", "faults: fault entry without action",
            -EINVAL },
          { "root:setup_begin=  ", "faults: fault entry without action",
            -EINVAL },
          { "root:setup_begin=delay(1)+delay(1)+delay(1)+delay(1)+delay(1)",
            "faults: too many actions (max 4)", -EINVAL },
          /* Numbers: digits only, at least one. */
          { "root:setup_begin=delay()",
            "faults: fault action 'delay()': '' is not a decimal number",
            -EINVAL },
          { "root:setup_begin=delay(1a)",
            "faults: fault action 'delay(1a)': '1a' is not a decimal number",
            -EINVAL },
          { "root:setup_begin=delay(/)",
            "faults: fault action 'delay(/)': '/' is not a decimal number",
            -EINVAL },
          { NULL, NULL, 0 } } },
};

static void every_probe_is_refused_with_its_message(void **state)
{
    const struct refusal_case *row = rt_row(state);

    for (const struct refusal *p = row->probes; p->text; p++)
        if (row->parser == TREE_SPEC)
            expect_spec_error(p->text, p->rc, p->msg);
        else {
            /* worker_options_validate() and worker_new() refuse with
               -EINVAL only: a fault row says so. */
            assert_int_equal(p->rc, -EINVAL);
            expect_faults_error(p->text, p->msg);
        }
}

/* ---- tree spec: totals ---- */

static void
tree_spec_at_the_process_limit_is_built_one_more_is_refused(void **state)
{
    mpfw_tree *t = NULL;

    (void)state;
    /* 8 x (1 + 63 + 64) = 1,024 processes: built NEW, nothing forked. */
    assert_int_equal(mpfw_tree_new(&t, "L4{L3{sub*63,chip*64}*8}", NULL), 0);
    assert_non_null(mpfw_tree_find(t, "next.7"));
    assert_null(mpfw_tree_find(t, "next.8"));
    expect_spec_error("L4{L3{sub*64,chip*64}*8}", -E2BIG,
                      "spec 'L4{L3{sub*64,chip*64}*8}' describes 1,032 "
                      "processes; "
                      "the limit is 1,024 (MPFW_SPEC_MAX_PROCESSES)");
    assert_int_equal(mpfw_open_trees(),
                     1); /* the first one, freed by teardown */
}

/* A role path names a child by its decimal index: no sign, no blank, no
   wrap-around of an index too large for an unsigned. */
static void tree_find_takes_only_an_index_in_range(void **state)
{
    mpfw_tree *t = NULL;

    (void)state;
    assert_int_equal(mpfw_tree_new(&t, "L4{L3*2}", NULL), 0);
    assert_non_null(mpfw_tree_find(t, "next.0"));
    assert_non_null(mpfw_tree_find(t, "next.1"));
    assert_null(mpfw_tree_find(t, "next.2"));
    assert_null(mpfw_tree_find(t, "next.4294967296"));  /* 2^32: not next.0 */
    assert_null(mpfw_tree_find(t, "next.-4294967295")); /* not next.1 */
    assert_null(mpfw_tree_find(t, "next.+1"));
    assert_null(mpfw_tree_find(t, "next. 1"));
    assert_null(mpfw_tree_find(t, "next.1x"));
    assert_null(mpfw_tree_find(t, "next."));
}

/* ---- fault specs (worker_options.faults and WORKER_FAULTS) ---- */

static void fault_text_is_refused_rather_than_cut(void **state)
{
    char spec[400];

    (void)state;
    /* A 128-byte message used to be cut to 127 bytes. */
    snprintf(spec, sizeof(spec), "chip.0:setup_begin=fail(%0128d)", 0);
    expect_faults_error(spec,
                        "faults: fault action 'fail': message of 128 bytes "
                        "is longer than 127");
    snprintf(spec, sizeof(spec), "%096d:setup_begin=hang", 0);
    expect_faults_error(spec,
                        "faults: fault role of 96 bytes is longer than 95");
    /* A trailing '+' used to be ignored. */
    expect_faults_error("root:setup_begin=delay(1)+",
                        "faults: fault entry 'root:setup_begin=delay(1)+': "
                        "empty "
                        "fault action");
}

static void fault_table_is_limited_and_blanks_are_skipped(void **state)
{
    worker_options o = WORKER_OPTIONS_INIT;
    char spec[33 * 24 + 1] = "", m[256];

    (void)state;
    for (size_t i = 0, off = 0; i < 33; i++)
        off += (size_t)snprintf(spec + off, sizeof(spec) - off, "%s",
                                "root:setup_begin=hang;");
    expect_faults_error(spec, "faults: too many fault entries (max 32)");
    /* 32 entries fit (the 33rd is the one refused). */
    spec[32 * 22] = '\0';
    o.faults = spec;
    assert_int_equal(worker_options_validate(&o, m, sizeof(m)), 0);
    assert_string_equal(m, "");
    /* Blanks around an entry and empty entries are no error. */
    o.faults = " root:setup_begin=delay(1) ;  ;";
    assert_int_equal(worker_options_validate(&o, m, sizeof(m)), 0);
}

static void options_are_checked_field_by_field(void **state)
{
    static const worker_options init = WORKER_OPTIONS_INIT;
    worker_script slow = { WORKER_SCRIPT_SLOW_FAIL, -1, NULL };
    worker_script exit256 = { WORKER_SCRIPT_EXIT, 256, NULL };
    worker_script unknown = { (worker_script_kind)99, 0, NULL };
    worker_options o;
    char m[64] = "untouched";

    (void)state;
    o = init;
    o.startup_timeout_s = 2e6;
    expect_options_error(&o, "startup_timeout_s must be at most 1e6 s (got "
                             "2e+06)");
    o = init;
    o.device_leaks = (worker_device_leaks)7;
    expect_options_error(&o, "device_leaks must be RECLAIM or KEEP (got 7)");
    o = init;
    o.chip_pipeline_depth = 9;
    expect_options_error(&o, "chip_pipeline_depth must be 1..8 (got 9)");
    o = init;
    o.chip_memory_bytes = 100;
    expect_options_error(&o, "chip_memory_bytes must be 4096..1073741824 (got "
                             "100)");
    o = init;
    o.sub_scripts = &slow;
    expect_options_error(&o, "sub_scripts given without sub children");
    o = init;
    o.chip_scripts = &slow;
    expect_options_error(&o, "chip_scripts given without chips");
    o.num_chips = 1;
    expect_options_error(&o, "chip 0: slow_fail delay must be 0..3600000 ms "
                             "(got -1)");
    o = init;
    o.num_subs = 1;
    o.sub_scripts = &exit256;
    expect_options_error(&o, "sub 0: exit code must be 0..255 (got 256)");
    o = init;
    o.self_script = unknown;
    expect_options_error(&o, "self 0: unknown script kind 99");
    /* NULL options: -EINVAL; a zero-sized buffer is not written. */
    assert_int_equal(worker_options_validate(NULL, m, sizeof(m)), -EINVAL);
    assert_string_equal(m, "options are NULL");
    o = init;
    o.num_chips = 1;
    o.level = 4;
    strcpy(m, "untouched");
    assert_int_equal(worker_options_validate(&o, m, 0), -EINVAL);
    assert_string_equal(m, "untouched");
}

static void script_parse_refuses_what_it_cannot_quote(void **state)
{
    worker_script sc = WORKER_SCRIPT_INIT;
    char m[512], text[263];

    (void)state;
    assert_int_equal(worker_script_parse(NULL, 0, &sc, NULL, m, sizeof(m)),
                     -EINVAL);
    assert_string_equal(m, "script text or output is NULL");
    assert_int_equal(worker_script_parse("ok", 2, NULL, NULL, m, sizeof(m)),
                     -EINVAL);
    assert_int_equal(worker_script_parse("fail(a\0b)", 9, &sc, NULL, m,
                                         sizeof(m)),
                     -EINVAL);
    /* The quote ends at the NUL it reports. */
    assert_string_equal(m, "script 'fail(a' holds a NUL byte");
    assert_int_equal(worker_script_parse("fail(abc", 8, &sc, NULL, m,
                                         sizeof(m)),
                     -EINVAL);
    assert_string_equal(m, "script 'fail(abc': missing ')'");
    char xs[257];
    memset(xs, 'x', 256);
    xs[256] = '\0';
    snprintf(text, sizeof(text), "fail(%s)", xs);
    assert_int_equal(worker_script_parse(text, 262, &sc, NULL, m, sizeof(m)),
                     -EINVAL);
    assert_string_equal(m, "script 'fail(xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                           "xxxxxx...': message of 256 bytes is longer than "
                           "255");
    /* Refusals leave the output untouched. */
    assert_int_equal(sc.kind, WORKER_SCRIPT_OK);
}

/* The other side of each range: the upper bound where the field above
   tested the lower one, and the reverse. */
static void option_ranges_are_checked_on_both_sides(void **state)
{
    static const worker_options init = WORKER_OPTIONS_INIT;
    worker_script slow = { WORKER_SCRIPT_SLOW_FAIL, 3600001, NULL };
    worker_script exit_neg = { WORKER_SCRIPT_EXIT, -1, NULL };
    worker_script sc = WORKER_SCRIPT_INIT;
    worker_options o;
    char m[256];

    (void)state;
    o = init;
    o.num_subs = 1;
    o.sub_scripts = &slow;
    expect_options_error(&o, "sub 0: slow_fail delay must be 0..3600000 ms "
                             "(got 3600001)");
    o = init;
    o.num_chips = 1;
    o.chip_scripts = &exit_neg;
    expect_options_error(&o, "chip 0: exit code must be 0..255 (got -1)");
    o = init;
    o.chip_memory_bytes = (1u << 30) + 1;
    expect_options_error(&o, "chip_memory_bytes must be 4096..1073741824 (got "
                             "1073741825)");
    o = init;
    o.drain_timeout_s = 0;
    expect_options_error(&o, "drain_timeout_s must be > 0 (got 0)");
    /* Both bounds themselves are accepted. */
    o = init;
    o.chip_memory_bytes = 1u << 30;
    slow.arg = WORKER_SCRIPT_DELAY_MAX_MS;
    o.num_subs = 1;
    o.sub_scripts = &slow;
    assert_int_equal(worker_options_validate(&o, m, sizeof(m)), 0);
    /* A script name with '(' but too short for its ')'. */
    assert_int_equal(worker_script_parse("fail(", 5, &sc, NULL, m, sizeof(m)),
                     -EINVAL);
    assert_string_equal(m, "script 'fail(': missing ')'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(
            tree_spec_at_the_process_limit_is_built_one_more_is_refused, 2000),
        mpfw_unit_test(tree_find_takes_only_an_index_in_range, 2000),
        mpfw_unit_test(fault_text_is_refused_rather_than_cut, 2000),
        mpfw_unit_test(fault_table_is_limited_and_blanks_are_skipped, 2000),
        mpfw_unit_test(options_are_checked_field_by_field, 2000),
        mpfw_unit_test(script_parse_refuses_what_it_cannot_quote, 2000),
        mpfw_unit_test(option_ranges_are_checked_on_both_sides, 2000),
    };
    const struct rt_table tables[] = {
        RT_TABLE(refusal_cases, every_probe_is_refused_with_its_message, 2000),
    };
    return rt_run_group_tests(tests, tables);
}
