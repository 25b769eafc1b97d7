/* SPDX-License-Identifier: MIT */
/*
 * table_forms.c — a cmocka suite written with every form of cmocka 1.1's
 * public table API, as projects write them, and no mpfixture header:
 * group state, per-test state from a setup, prestate, prestate with a
 * setup/teardown pair, a skip, and the program's own filter from argv.
 * Each case asserts the state cmocka promises it; the suite passes plain
 * and guarded alike (the guard must keep its data out of `state`). Two
 * groups in one program, as many suites have.
 *
 *   table_forms [FILTER]   run the cases matching FILTER (cmocka's glob)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct conn {
    char magic[8];
    int uses;
};

static int group_setup(void **state)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    memcpy(c->magic, "conn-ok", 8);
    *state = c;
    return 0;
}

static int group_teardown(void **state)
{
    struct conn *c = *state;
    /* every case that saw the group state counted itself */
    int ok = c && strcmp(c->magic, "conn-ok") == 0 && c->uses >= 1;
    free(c);
    return ok ? 0 : -1;
}

static void uses_group_state(void **state)
{
    struct conn *c = *state;
    assert_non_null(c);
    assert_string_equal(c->magic, "conn-ok");
    c->uses++;
}

static void uses_group_state_again(void **state)
{
    struct conn *c = *state;
    assert_string_equal(c->magic, "conn-ok");
    assert_true(c->uses >= 1);
    c->uses++;
}

/* A per-test setup replaces the state for its test and teardown. */
static int own_setup(void **state)
{
    int *n = malloc(sizeof *n);
    if (!n)
        return -1;
    *n = 42;
    *state = n;
    return 0;
}

static int own_teardown(void **state)
{
    int *n = *state;
    int ok = n && *n == 43;
    free(n);
    return ok ? 0 : -1;
}

static void uses_own_state(void **state)
{
    int *n = *state;
    assert_int_equal(*n, 42);
    (*n)++;
}

/* With a group state, cmocka 1.1 gives it precedence over a prestate. */
static int prestate_value = 7;

static void prestate_loses_to_group_state(void **state)
{
    struct conn *c = *state;
    assert_string_equal(c->magic, "conn-ok");
}

static int setup_sees_group_state(void **state)
{
    struct conn *c = *state;
    return c && strcmp(c->magic, "conn-ok") == 0 ? 0 : -1;
}

static void setup_saw_group_state(void **state)
{
    struct conn *c = *state;
    assert_string_equal(c->magic, "conn-ok");
}

static void skips_itself(void **state)
{
    (void)state;
    skip();
}

static void filtered_out_fails(void **state)
{
    (void)state;
    fail_msg("a case the filter excludes must not run");
}

/* A second group of the same program, with no group setup: a prestate is
   the case's state, an entry without one gets NULL. */
static void prestate_is_the_state(void **state)
{
    assert_ptr_equal(*state, &prestate_value);
}

static void no_state_is_null(void **state)
{
    assert_null(*state);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uses_group_state),
        cmocka_unit_test_setup_teardown(uses_own_state, own_setup,
                                        own_teardown),
        cmocka_unit_test_prestate(prestate_loses_to_group_state,
                                  &prestate_value),
        cmocka_unit_test_prestate_setup_teardown(setup_saw_group_state,
                                                 setup_sees_group_state, NULL,
                                                 &prestate_value),
        cmocka_unit_test(skips_itself),
        cmocka_unit_test(uses_group_state_again),
        cmocka_unit_test(filtered_out_fails),
    };
    const struct CMUnitTest stateless[] = {
        cmocka_unit_test_prestate(prestate_is_the_state, &prestate_value),
        cmocka_unit_test(no_state_is_null),
    };
    cmocka_set_skip_filter("filtered_out_*");
    if (argc > 1 && argv[1][0] != '-')
        cmocka_set_test_filter(argv[1]);
    int failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
    return failed + cmocka_run_group_tests(stateless, NULL, NULL);
}
