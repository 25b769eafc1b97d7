/* SPDX-License-Identifier: MIT */
/*
 * test_orphan_child_reaping.c — port of simpler's test_orphan_child_reaping.py
 * (simpler-lifecycle.md §3.4), tightened: a helper process is the root of a
 * tree, records its descendants in shared memory (never stdout, never a pid
 * scrape of the whole system), then dies by SIGKILL. Every descendant must be
 * gone within 1 s (simpler allowed 20 s), through the children's
 * parent-death path (PR_SET_PDEATHSIG + the pre-fork pid re-check), without
 * spinning. The test process is the fixture's subreaper, so the orphans are
 * re-parented to it and it reaps them through pidfds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/prctl.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/worker.h>
#include "rt_helpers.h"

#define MAX_PIDS 64

struct record {
    _Atomic unsigned n;
    pid_t pids[MAX_PIDS];
    double t_kill;       /* when the helper killed itself */
    long cpu_ticks_idle; /* descendants' utime+stime over an idle window */
};

static long cpu_ticks(pid_t pid)
{
    char buf[1024];
    unsigned long ut = 0, st = 0;
    if (!rt_read_proc(pid, "stat", buf, sizeof(buf)))
        return 0;
    char *p = strrchr(buf, ')');
    /* fields after ")": state(3) ... utime(14) stime(15) */
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        return 0;
    return (long)(ut + st);
}

/* All descendants of the calling process, breadth first. */
static void record_descendants(struct record *r)
{
    pid_t queue[MAX_PIDS];
    size_t head = 0, tail = rt_children_of(getpid(), queue, MAX_PIDS);

    while (head < tail) {
        pid_t p = queue[head++];
        r->pids[atomic_load(&r->n)] = p;
        atomic_fetch_add(&r->n, 1);
        tail += rt_children_of(p, queue + tail, MAX_PIDS - tail);
    }
}

/* The helper: build and init a tree, record, measure an idle window, die. */
static _Noreturn void helper(struct record *r, worker *w)
{
    if (worker_init(w) != 0)
        _exit(3);
    record_descendants(r);
    long before = 0, after = 0;
    for (unsigned i = 0; i < atomic_load(&r->n); i++)
        before += cpu_ticks(r->pids[i]);
    /* A measurement window (not a settle delay): an idle READY tree parks
       on futexes and must burn no CPU in it. */
    struct timespec ts = { 0, 300 * 1000000 };
    nanosleep(&ts, NULL);
    for (unsigned i = 0; i < atomic_load(&r->n); i++)
        after += cpu_ticks(r->pids[i]);
    r->cpu_ticks_idle = after - before;
    r->t_kill = rt_now_s();
    kill(getpid(), SIGKILL);
    _exit(4);
}

/* Wait until every recorded pid is gone, by limit_s after the kill; reap the
   ones re-parented to us. Returns how many are still there. */
static unsigned await_all_gone(struct record *r, double limit_s)
{
    unsigned left = 0;

    for (unsigned i = 0; i < atomic_load(&r->n); i++) {
        int ms = (int)((r->t_kill + limit_s - rt_now_s()) * 1000);
        if (ms < 0)
            ms = 0;
        /* Killed at the limit if still there: never left behind. */
        int rc = rt_await_exit(r->pids[i], ms);
        if (rc == -ECHILD)
            fail_msg("pid %d outlived its parent without reaching us",
                     (int)r->pids[i]);
        if (rc != 0)
            left++;
        siginfo_t si;
        waitid(P_PID, (id_t)r->pids[i], &si, WEXITED); /* ECHILD if not ours */
    }
    return left;
}

/* /dev/shm names of a root pid. */
static unsigned stale_names_of(pid_t root)
{
    char prefix[32];
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    unsigned n = 0;

    snprintf(prefix, sizeof(prefix), "wk-%d-", (int)root);
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

static pid_t run_orphan_case(worker *w, unsigned expect_descendants)
{
    struct record *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int status;

    assert_true(r != MAP_FAILED);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        helper(r, w);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    assert_int_equal(atomic_load(&r->n), expect_descendants);
    unsigned left = await_all_gone(r, rt_bound_s(1.0));
    if (left)
        fail_msg("%u descendant(s) still alive %.1f s after the root was "
                 "killed",
                 left, rt_bound_s(1.0));
    /* Parked children: at most one clock tick between them over 300 ms. */
    if (r->cpu_ticks_idle > 1)
        fail_msg("idle tree used %ld ticks of CPU in 300 ms",
                 r->cpu_ticks_idle);
    /* The dead root's mailboxes are stale now: reclaimable by name. */
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%s", worker_shm_prefix(w));
    assert_string_equal(prefix, ""); /* the parent's copy never ran init */
    munmap(r, sizeof(*r));
    return pid;
}

static void children_exit_when_parent_is_killed(void **state)
{
    worker *w;
    worker_options o = WORKER_OPTIONS_INIT;

    o.num_subs = 3;
    o.startup_timeout_s = 5;
    assert_int_equal(worker_new(&w, &o), 0);
    pid_t root = run_orphan_case(w, 3);
    assert_true(stale_names_of(root) <= 3);
    assert_true(worker_reclaim_stale() >= 0);
    /* (a concurrent suite may have reclaimed some of them already) */
    assert_int_equal(stale_names_of(root), 0);
    worker_free(w);
}

static void nested_tree_descendants_exit_when_root_is_killed(void **state)
{
    worker *w, *c[2];
    worker_options o4 = WORKER_OPTIONS_INIT, o3 = WORKER_OPTIONS_INIT;

    o4.level = 4;
    o4.num_subs = 1;
    o3.num_subs = 2;
    o3.num_chips = 2;
    assert_int_equal(worker_new(&w, &o4), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(worker_new(&c[i], &o3), 0);
        assert_int_equal(worker_add_child(w, c[i]), i);
    }
    /* 1 sub + 2 L3 + 2 x (2 subs + 2 chips) */
    pid_t root = run_orphan_case(w, 1 + 2 + 8);
    /* The root's own three mailboxes are stale; the L3s unlinked theirs. */
    assert_true(stale_names_of(root) <= 3);
    /* Nested L3s left through their shutdown path and unlinked their own
       mailboxes; the root's and whatever a killed chip left are stale. */
    worker_reclaim_stale();
    assert_int_equal(stale_names_of(root), 0);
    worker_free(w);
}

/* The root dies while a child is still in setup (hanging): the child sees
   the parent's death there too, not only in its serve loop. */
static void parent_killed_during_child_setup(void **state)
{
    worker *w;
    worker_gates *g;
    worker_options o = WORKER_OPTIONS_INIT;
    worker_script s[2] = { { WORKER_SCRIPT_HANG, 0, NULL },
                           WORKER_SCRIPT_INIT };
    struct record *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int status;

    assert_true(r != MAP_FAILED);
    assert_int_equal(worker_gates_new(&g), 0);
    o.num_subs = 2;
    o.sub_scripts = s;
    o.startup_timeout_s = 5;
    o.gates = g;
    /* The helper (root) parks in its barrier; the test records its
       children, then kills it while sub 0 still hangs in setup. */
    o.faults = "root:barrier_poll=gate_wait(0)";
    assert_int_equal(worker_new(&w, &o), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        worker_init(w); /* killed inside */
        _exit(5);
    }
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 3000), 0);
    atomic_store(&r->n, (unsigned)rt_children_of(pid, r->pids, MAX_PIDS));
    assert_int_equal(atomic_load(&r->n), 2);
    r->t_kill = rt_now_s();
    assert_int_equal(kill(pid, SIGKILL), 0); /* our unreaped child */
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    unsigned left = await_all_gone(r, rt_bound_s(1.0));
    if (left)
        fail_msg("%u child(ren) in setup survived the root's death", left);
    worker_reclaim_stale();
    worker_free(w);
    worker_gates_free(g);
    munmap(r, sizeof(*r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(children_exit_when_parent_is_killed, 5000),
        mpf_unit_test(nested_tree_descendants_exit_when_root_is_killed, 5000),
        mpf_unit_test(parent_killed_during_child_setup, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
