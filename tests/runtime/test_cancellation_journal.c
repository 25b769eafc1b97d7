/* SPDX-License-Identifier: MIT */
/*
 * test_cancellation_journal.c — port of simpler's test_cancellation_journal.py
 * (simpler-lifecycle.md §3.3) onto libworker's public API.
 *
 * simpler fakes waitpid/kill to make a child "unreapable"; here the parent's
 * "reap" fault point with gate_fail(0) does it for real: while gate 0 is
 * closed, an exited (SIGKILLed) child counts as not reapable yet and goes to
 * the cleanup journal with its live mailbox; opening the gate lets the next
 * close() reclaim it.
 *
 * Adapted or dropped, one line each:
 * - TestCleanupJournal drives the worker's own journal through close(), not a
 *   standalone class; `extend` is a Python list helper with no C counterpart.
 * - same_thread_close_during_init_rejected: no user code runs on the init
 *   thread during init in C (hooks run in the children), so the -EDEADLK path
 *   cannot be reached from a test.
 * - both_teardown_paths_retry_each_resource_class: regions, domains, remote
 *   sessions and buffers are out of scope; the two classes we have (child,
 *   shm) are retried on both paths (rollback, close).
 */
#include <mpfixture/cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>

#include <mpfixture/fakechips.h>

#include "rt_helpers.h"
#include "rt_table.h"

#define REAP_HELD "root:reap=gate_fail(0)"

static mpfw_options fast_options(void)
{
    mpfw_options o = MPFW_OPTIONS_INIT;
    o.startup_timeout_s = 5;
    o.rollback_timeout_s = 0.5;
    o.close_timeout_s = 0.5;
    return o;
}

/* /dev/shm entries whose name starts with prefix (leading '/' skipped). */
static unsigned shm_count(const char *prefix)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    unsigned n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix + 1, strlen(prefix) - 1) == 0)
            n++;
    closedir(d);
    return n;
}

static bool shm_exists(const char *name)
{
    char path[256];
    struct stat st;

    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return stat(path, &st) == 0;
}

/* ---- TestCleanupJournal ---- */

static void empty_drive_returns_none(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub}", &o), 0);
    assert_int_equal(worker_journal_size(mpfw_tree_root(t)), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_journal_size(mpfw_tree_root(t)), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
}

/* ---- the held reap, one shape: close -> journal -> reclaim ----
   A row spins up a READY `spec` whose every reap is held (gate 0 closed,
   REAP_HELD), so close() journals each child it SIGKILLed: `held_closes`
   calls of close() in a row each return -ETIMEDOUT and leave the worker
   CLOSED with `journaled` entries; its error names each of `messages`; the
   prefix keeps `shm_while_held` /dev/shm objects (0: not checked). Once
   the gate opens, one close() returns 0 and reclaims everything: an empty
   journal and no /dev/shm object of the tree. */
struct held_reap {
    /* cppcheck-suppress unusedStructMember ; rt_table.h reads it */
    const char *name;
    const char *spec;
    const char *messages[2];
    size_t journaled;
    unsigned held_closes;
    unsigned shm_while_held;
};
RT_ROW_NAME_FIRST(struct held_reap);

static const struct held_reap held_reaps[] = {
    /* TestCleanupJournal. The survivor's mailbox is kept: freeing it
       before the reap would be a use-after-free in a live child. */
    { .name = "failure_keeps_entry",
      .spec = "L3{sub}",
      .held_closes = 1,
      .journaled = 1,
      .messages = { "un-reclaimed", "sub 0 (pid" },
      .shm_while_held = 1 },
    { .name = "success_removes_entry",
      .spec = "L3{sub}",
      .held_closes = 1,
      .journaled = 1 },
    /* A second close() while the reap is still held fails again. */
    { .name = "failed_entry_retryable",
      .spec = "L3{chip}",
      .held_closes = 2,
      .journaled = 1 },
    { .name = "all_entries_attempted_on_failure",
      .spec = "L3{sub*2,chip}",
      .held_closes = 1,
      .journaled = 3 },
    { .name = "errors_accumulated",
      .spec = "L3{sub*2}",
      .held_closes = 1,
      .journaled = 2,
      .messages = { "sub 0 (pid", "sub 1 (pid" } },
    /* TestJournalInAbortHierarchical: the root journals its next-level
       child (which took its own subtree down). */
    { .name = "journal_persists_after_close_failure",
      .spec = "L4{L3{sub,chip}}",
      .held_closes = 1,
      .journaled = 1 },
    /* TestJournalRetryOnClose */
    { .name = "journal_retry_on_close",
      .spec = "L3{sub,chip*2}",
      .held_closes = 1,
      .journaled = 3 },
};

static void held_reap_is_journaled_then_reclaimed(void **state)
{
    const struct held_reap *row = rt_row(state);
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = fast_options();
    char prefix[128];

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = REAP_HELD;
    assert_int_equal(mpfw_tree_spin_up(&t, row->spec, &o), 0);
    worker *w = mpfw_tree_root(t);
    snprintf(prefix, sizeof(prefix), "%s", worker_shm_prefix(w));

    for (unsigned i = 0; i < row->held_closes; i++)
        assert_int_equal(worker_close(w), -ETIMEDOUT);
    assert_int_equal(worker_get_state(w), WORKER_CLOSED);
    assert_int_equal(worker_journal_size(w), row->journaled);
    for (size_t i = 0; i < 2 && row->messages[i]; i++)
        assert_contains(worker_last_error(w), row->messages[i]);
    if (row->shm_while_held)
        assert_int_equal(shm_count(prefix), row->shm_while_held);

    worker_gate_open(g, 0);
    assert_int_equal(worker_close(w), 0);
    assert_int_equal(worker_journal_size(w), 0);
    assert_int_equal(shm_count(prefix), 0);
    worker_gates_free(g);
}

/* ---- TestCloseDuringInitializing ---- */

struct closer {
    worker_gates *g;
    worker *w;
    int rc;
    char msg[512];
};

static void *close_when_in_barrier(void *arg)
{
    struct closer *c = arg;

    worker_gate_await_arrivals(c->g, 1, 1, 5000);
    c->rc = worker_close(c->w);
    return NULL;
}

static void close_cancels_init_reaches_closed(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();
    struct closer c = { 0 };
    pthread_t th;

    assert_int_equal(worker_gates_new(&c.g), 0);
    worker_gate_open(c.g, 1); /* an arrival counter that never blocks */
    o.gates = c.g;
    o.faults = "root:barrier_poll=gate_wait(1)";
    /* A nested subtree mid-init: the cancel reaches its grandchildren too. */
    assert_int_equal(mpfw_tree_new(&t, "L4{L3{sub*2}:hang}", &o), 0);
    c.w = mpfw_tree_root(t);
    assert_int_equal(pthread_create(&th, NULL, close_when_in_barrier, &c), 0);
    assert_int_equal(worker_init(c.w), -ECANCELED);
    pthread_join(th, NULL);
    assert_int_equal(c.rc, 0);
    assert_int_equal(worker_get_state(c.w), WORKER_CLOSED);
    assert_int_equal(worker_journal_size(c.w), 0);
    worker_gates_free(c.g);
}

static void *close_with_short_budget(void *arg)
{
    struct closer *c = arg;

    worker_gate_await_arrivals(c->g, 1, 1, 5000);
    c->rc = worker_close(c->w);
    /* Read before the init thread can write its own error. */
    snprintf(c->msg, sizeof(c->msg), "%s", worker_last_error(c->w));
    worker_gate_open(c->g, 1); /* now let the init unwind */
    return NULL;
}

static void uncooperative_init_bounds_the_close_wait(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();
    struct closer c = { 0 };
    pthread_t th;

    assert_int_equal(worker_gates_new(&c.g), 0);
    o.gates = c.g;
    o.close_timeout_s = 0.3;
    /* The init thread sits in a closed gate: it cannot see the cancel. */
    o.faults = "root:barrier_poll=gate_wait(1)";
    assert_int_equal(mpfw_tree_new(&t, "L3{sub:hang}", &o), 0);
    c.w = mpfw_tree_root(t);
    assert_int_equal(pthread_create(&th, NULL, close_with_short_budget, &c), 0);
    int rc = worker_init(c.w);
    pthread_join(th, NULL);
    assert_int_equal(c.rc, -ETIMEDOUT);
    assert_contains(c.msg, "did not unwind");
    assert_int_equal(rc, -ECANCELED);
    /* The init has unwound now: a later close converges. */
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_child_pids(c.w, WORKER_CHILD_SUB, NULL, 0), 0);
    worker_gates_free(c.g);
}

/* ---- TestClosedAbsorption ---- */

static void closed_absorbing(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();
    struct closer c = { 0 };
    pthread_t th;

    assert_int_equal(worker_gates_new(&c.g), 0);
    worker_gate_open(c.g, 1);
    o.gates = c.g;
    o.faults = "root:barrier_poll=gate_wait(1)";
    assert_int_equal(mpfw_tree_new(&t, "L3{sub:slow_fail(3000)}", &o), 0);
    c.w = mpfw_tree_root(t);
    assert_int_equal(pthread_create(&th, NULL, close_when_in_barrier, &c), 0);
    /* The init fails (cancelled) after close published CLOSED: its late
       FAILED commit must not overwrite CLOSED. */
    assert_int_equal(worker_init(c.w), -ECANCELED);
    pthread_join(th, NULL);
    assert_int_equal(worker_get_state(c.w), WORKER_CLOSED);
    assert_int_equal(worker_init(c.w), -ESHUTDOWN);
    worker_gates_free(c.g);
}

/* ---- TestJournalInAbortHierarchical ---- */

static void unreaped_sigkill_survivor_is_journaled_with_live_shm(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = fast_options();
    worker_rollback_report r;
    char name[160];

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = REAP_HELD;
    o.rollback_timeout_s = 0.2;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub,sub:fail}", &o), -EIO);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_last_rollback(w, &r), 0);
    assert_int_equal(r.journaled, 2);
    assert_int_equal(worker_journal_size(w), 2);
    snprintf(name, sizeof(name), "%ssub-0", worker_shm_prefix(w));
    assert_true(shm_exists(name));
    worker_gate_open(g, 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_false(shm_exists(name));
    assert_int_equal(worker_journal_size(w), 0);
    worker_gates_free(g);
}

static void journal_reclaims_child_already_reaped_elsewhere(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = fast_options();
    worker_rollback_report r;
    char prefix[128];

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = REAP_HELD;
    o.rollback_timeout_s = 0.2;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub:fail}", &o), -EIO);
    worker *w = mpfw_tree_root(t);
    snprintf(prefix, sizeof(prefix), "%s", worker_shm_prefix(w));
    assert_int_equal(worker_last_rollback(w, &r), 0);
    assert_int_equal(worker_journal_size(w), 1);
    /* Someone else (here: the test) reaps the journaled child. */
    assert_int_equal(waitpid(r.entries[0].pid, NULL, 0), r.entries[0].pid);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_journal_size(w), 0);
    assert_int_equal(shm_count(prefix), 0);
    worker_gates_free(g);
}

static void fully_reaped_abort_leaves_empty_journal(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();

    assert_int_equal(mpfw_tree_spin_up(&t, "L4{L3{sub,chip}:fail,L3{sub}}", &o),
                     -EIO);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_journal_size(w), 0);
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_NEXT, NULL, 0), 0);
    assert_int_equal(shm_count(worker_shm_prefix(w)), 0);
}

/* ---- TestJournalRetryOnClose ---- */

static void child_journal_driven_after_shutdown_phase(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = fast_options();

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.rollback_timeout_s = 0.2;
    /* Rollback journals the failed sub (gate closed); the next close opens
       the gate only after its SHUTDOWN broadcast, so the journal entry is
       reclaimed only if it is driven after that phase. */
    o.faults = REAP_HELD ";root:close_after_broadcast=gate_open(0)";
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub:fail}", &o), -EIO);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_journal_size(w), 1);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_journal_size(w), 0);
    worker_gates_free(g);
}

/* ---- TestShmNames ---- */

static void shm_name_with_token(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();
    char expect[64], name[160];
    unsigned token = 0;
    int used = 0;

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub,chip}", &o), 0);
    const char *prefix = worker_shm_prefix(mpfw_tree_root(t));
    snprintf(expect, sizeof(expect), "/wk-%d-", (int)getpid());
    assert_int_equal(strncmp(prefix, expect, strlen(expect)), 0);
    assert_int_equal(sscanf(prefix + strlen(expect), "%8x-%n", &token, &used),
                     1);
    assert_int_equal(used, 9);
    assert_int_equal(strlen(prefix), strlen(expect) + 9);
    snprintf(name, sizeof(name), "%ssub-0", prefix);
    assert_true(shm_exists(name));
    snprintf(name, sizeof(name), "%schip-0", prefix);
    assert_true(shm_exists(name));
    snprintf(name, sizeof(name), "%schip-0.dev", prefix);
    assert_true(shm_exists(name)); /* the simulated device memory */
    assert_int_equal(shm_count(prefix), 3);
}

static void shm_name_without_token(void **state)
{
    mpfw_tree *t;

    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", NULL), 0);
    assert_string_equal(worker_shm_prefix(mpfw_tree_root(t)), "");
}

static void root_assigns_unique_tokens_to_the_whole_nested_tree(void **state)
{
    mpfw_tree *a, *b;
    mpfw_options o = fast_options();
    char name[160];

    assert_int_equal(mpfw_tree_spin_up(&a, "L5{L4{L3{sub},L3{sub}}}", &o), 0);
    assert_int_equal(mpfw_tree_spin_up(&b, "L3{sub}", &o), 0);
    const char *pa = worker_shm_prefix(mpfw_tree_root(a));
    const char *pb = worker_shm_prefix(mpfw_tree_root(b));
    assert_string_not_equal(pa, pb);
    /* Every nested mailbox lives under the root's prefix. */
    snprintf(name, sizeof(name), "%sn0.n1.sub-0", pa);
    assert_true(shm_exists(name));
    snprintf(name, sizeof(name), "%sn0.next-1", pa);
    assert_true(shm_exists(name));
    assert_int_equal(shm_count(pa), 1 + 2 + 2);
}

static void root_namespace_scan_reclaims_nested_only(void **state)
{
    mpfw_tree *t;
    mpfw_options o = fast_options();
    char foreign[64], nested[160];
    pid_t pid;

    assert_int_equal(mpfw_tree_spin_up(&t, "L4{L3{sub*2,chip}}", &o), 0);
    worker *w = mpfw_tree_root(t);
    snprintf(nested, sizeof(nested), "%sn0.sub-0", worker_shm_prefix(w));
    assert_true(shm_exists(nested));
    /* A foreign object that merely looks like ours. */
    snprintf(foreign, sizeof(foreign), "/wk-foreign-%d", (int)getpid());
    int fd = shm_open(foreign, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    /* The L3 dies without closing its subtree: its nested mailboxes stay. */
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_NEXT, &pid, 1), 1);
    assert_int_equal(kill(pid, SIGKILL), 0); /* our unreaped child */
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_false(shm_exists(nested));
    assert_int_equal(shm_count(worker_shm_prefix(w)), 0);
    assert_true(shm_exists(foreign));
    shm_unlink(foreign);
}

static void reclaim_stale_only_touches_dead_roots(void **state)
{
    char dead[96], live[96], other[64];
    pid_t pid;

    /* A pid that is certainly dead: a child we reaped. */
    pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    snprintf(dead, sizeof(dead), "/wk-%d-deadbeef-sub-0", (int)pid);
    snprintf(live, sizeof(live), "/wk-%d-deadbeef-sub-0", (int)getppid());
    snprintf(other, sizeof(other), "/wkx-%d", (int)getpid());
    const char *names[] = { dead, live, other };
    for (int i = 0; i < 3; i++) {
        int fd = shm_open(names[i], O_CREAT | O_EXCL | O_RDWR, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    int n = worker_reclaim_stale();
    assert_true(n >= 1);
    assert_false(shm_exists(dead));
    assert_true(shm_exists(live));
    assert_true(shm_exists(other));
    shm_unlink(live);
    shm_unlink(other);
}

/* Names that do not parse as "wk-<pid>-…" of a positive pid other than
   ours, and names another user owns, are never reclaimed, whatever the
   pid in them. */
static void reclaim_stale_keeps_what_it_cannot_attribute(void **state)
{
    char mine[96], foreign[96], no_dash[64], no_pid[64], pid_0[64];
    pid_t pid;

    (void)state;
    pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    snprintf(mine, sizeof(mine), "/wk-%d-deadbeef-sub-0", (int)getpid());
    snprintf(foreign, sizeof(foreign), "/wk-%d-deadbeef-sub-1", (int)pid);
    snprintf(no_dash, sizeof(no_dash), "/wk-%dx", (int)pid);
    /* Ours in the name's tail only: the suite runs twice at once. */
    snprintf(no_pid, sizeof(no_pid), "/wk-x%d-sub-0", (int)getpid());
    snprintf(pid_0, sizeof(pid_0), "/wk-0-%d-sub-0", (int)getpid());
    /* The last: a dead root's name that another user owns (root only can
       make one). */
    const char *names[] = { mine, no_dash, no_pid, pid_0, foreign };
    const size_t n = geteuid() == 0 ? 5 : 4;
    if (n < 5)
        print_message("skipped, needs root: a dead pid's name another user "
                      "owns (%s); the other four are checked\n",
                      foreign);
    for (size_t i = 0; i < n; i++) {
        int fd = shm_open(names[i], O_CREAT | O_EXCL | O_RDWR, 0600);
        assert_true(fd >= 0);
        if (names[i] == foreign)
            assert_int_equal(fchown(fd, 65534, 65534), 0);
        close(fd);
    }
    assert_true(worker_reclaim_stale() >= 0);
    for (size_t i = 0; i < n; i++) {
        if (!shm_exists(names[i]))
            fail_msg("%s was reclaimed", names[i]);
        shm_unlink(names[i]);
    }
}

/* ---- TestNewWorkerClose ---- */

static void new_worker_close_journal_empty(void **state)
{
    worker *w;

    assert_int_equal(worker_new(&w, NULL), 0);
    assert_int_equal(worker_close(w), 0);
    assert_int_equal(worker_journal_size(w), 0);
    assert_int_equal(worker_get_state(w), WORKER_CLOSED);
    worker_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(empty_drive_returns_none, 5000),
        mpfw_unit_test(close_cancels_init_reaches_closed, 5000),
        mpfw_unit_test(uncooperative_init_bounds_the_close_wait, 5000),
        mpfw_unit_test(closed_absorbing, 5000),
        mpfw_unit_test(unreaped_sigkill_survivor_is_journaled_with_live_shm,
                       5000),
        mpfw_unit_test(journal_reclaims_child_already_reaped_elsewhere, 5000),
        mpfw_unit_test(fully_reaped_abort_leaves_empty_journal, 5000),
        mpfw_unit_test(child_journal_driven_after_shutdown_phase, 5000),
        mpfw_unit_test(shm_name_with_token, 5000),
        mpfw_unit_test(shm_name_without_token, 2000),
        mpfw_unit_test(root_assigns_unique_tokens_to_the_whole_nested_tree,
                       5000),
        mpfw_unit_test(root_namespace_scan_reclaims_nested_only, 5000),
        mpfw_unit_test(reclaim_stale_keeps_what_it_cannot_attribute, 5000),
        mpfw_unit_test(reclaim_stale_only_touches_dead_roots, 5000),
        mpfw_unit_test(new_worker_close_journal_empty, 2000),
    };
    const struct rt_table tables[] = {
        RT_TABLE(held_reaps, held_reap_is_journaled_then_reclaimed, 5000),
    };
    return rt_run_group_tests(tests, tables);
}
