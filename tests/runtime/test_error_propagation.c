/* SPDX-License-Identifier: MIT */
/*
 * test_error_propagation.c — port of simpler's
 * tests/ut/py/test_worker/test_error_propagation.py (simpler-lifecycle.md
 * §3.5, §1.10), same case names in snake_case, every case under the
 * fixture's guard.
 *
 * C has no exceptions: simpler's SentinelError("boom") is a sub callable
 * that writes "SentinelError: boom" into its message and returns non-zero;
 * an orchestration function "raises" by returning a negative errno with
 * worker_job_fail(). The error chain is the same text: "sub_worker: ",
 * "chip dev=N: ", "child_worker level=L: " prefixes, 255 bytes per hop.
 *
 * Adapted, one line each:
 * - sub_callable_missing_id_surfaces: simpler raises TypeError naming
 *   "CallableHandle returned by Worker.register"; here the submit returns
 *   -EINVAL naming worker_register_sub, and run() returns that code.
 * - subsequent_submit_raises_after_failure: the first failure is made
 *   certain before the second submit with worker_task_wait() (simpler's
 *   orchestration waits implicitly on the Python side).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"

/* ---- callables ---- */

/* Raises SentinelError(<arg text>). */
static int raises(void *arg, const void *args, size_t len, char *msg,
                  size_t size)
{
    (void)args;
    (void)len;
    snprintf(msg, size, "SentinelError: %s", (const char *)arg);
    return -1;
}

/* Submits sub callable `*(unsigned *)arg` once. */
static int submit_one(worker_job *job, void *arg)
{
    int t = worker_submit_sub(job, WORKER_ANY, *(unsigned *)arg, NULL, 0);
    return t < 0 ? t : 0;
}

static const char boom_from_sub[] = "boom-from-sub";
static const char l3_sub_boom[] = "l3-sub-boom";

/* A tree with sub callables "raises" (id 0) and "counts" (id 1). */
static worker *tree_with_callables(const char *spec, _Atomic unsigned *counter,
                                   mpfw_tree **t)
{
    mpfw_options o = rt_fast_options();
    worker *w;

    assert_int_equal(mpfw_tree_new(t, spec, &o), 0);
    w = mpfw_tree_root(*t);
    assert_int_equal(worker_register_sub(w, "raises", raises,
                                         (void *)boom_from_sub),
                     0);
    assert_int_equal(worker_register_sub(w, "counts", rt_count_call,
                                         (void *)counter),
                     1);
    assert_int_equal(worker_init(w), 0);
    return w;
}

/* ---- the suite ---- */

static void sub_callable_raises_surfaces_at_run(void **state)
{
    mpfw_tree *t;
    _Atomic unsigned *counter = rt_shared_counters(1);
    worker *w = tree_with_callables("L3{sub}", counter, &t);
    unsigned id = 0;

    assert_int_equal(worker_run(w, submit_one, &id), -EIO);
    assert_contains(worker_last_error(w), "sub_worker");
    assert_contains(worker_last_error(w), "SentinelError");
    assert_contains(worker_last_error(w), "boom-from-sub");
    assert_string_equal(worker_last_error(w),
                        "sub_worker: SentinelError: boom-from-sub");
    rt_shared_free(counter, 1);
}

static int submit_id_42(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_sub(job, WORKER_ANY, 42, NULL, 0);
    return t < 0 ? t : 0;
}

static void sub_callable_missing_id_surfaces(void **state)
{
    mpfw_tree *t;
    _Atomic unsigned *counter = rt_shared_counters(1);
    worker *w = tree_with_callables("L3{sub}", counter, &t);

    assert_int_equal(worker_run(w, submit_id_42, NULL), -EINVAL);
    assert_contains(worker_last_error(w), "no sub callable with id 42");
    assert_contains(worker_last_error(w), "worker_register_sub");
    rt_shared_free(counter, 1);
}

static int orch_raises(worker_job *job, void *arg)
{
    unsigned id = 1;
    (void)arg;
    /* A task submitted before the raise still runs (and is drained). */
    if (worker_submit_sub(job, WORKER_ANY, id, NULL, 0) < 0)
        return -EPROTO;
    return worker_job_fail(job, -EDOM, "SentinelError: orch-boom");
}

static void orchestration_exception_is_synchronous(void **state)
{
    mpfw_tree *t;
    _Atomic unsigned *counter = rt_shared_counters(1);
    worker *w = tree_with_callables("L3{sub}", counter, &t);
    worker_job *job = NULL;
    unsigned id = 1;

    /* Raised by submit itself, with its own code and text, not wrapped. */
    assert_int_equal(worker_submit(w, orch_raises, NULL, &job), -EDOM);
    assert_null(job);
    assert_string_equal(worker_last_error(w), "SentinelError: orch-boom");
    /* The next run is fine. */
    assert_int_equal(worker_run(w, submit_one, &id), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    /* Both tasks ran: the one of the failed submission was drained. */
    assert_int_equal(atomic_load(counter), 2);
    rt_shared_free(counter, 1);
}

static void failure_does_not_wedge_worker(void **state)
{
    mpfw_tree *t;
    _Atomic unsigned *counter = rt_shared_counters(1);
    worker *w = tree_with_callables("L3{sub}", counter, &t);
    unsigned bad = 0, good = 1;

    assert_int_equal(worker_run(w, submit_one, &bad), -EIO);
    assert_int_equal(worker_run(w, submit_one, &good), 0);
    assert_int_equal(atomic_load(counter), 1);
    assert_int_equal(worker_run(w, submit_one, &good), 0);
    assert_int_equal(atomic_load(counter), 2);
    rt_shared_free(counter, 1);
}

struct fail_fast {
    int first, second_rc;
    char second_msg[WORKER_ERROR_MAX];
};

static int fail_then_submit(worker_job *job, void *arg)
{
    struct fail_fast *f = arg;

    f->first = worker_submit_sub(job, 0, 0, NULL, 0);
    if (f->first < 0)
        return f->first;
    if (worker_task_wait(job, f->first, 5.0) != -EIO)
        return -EPROTO;
    f->second_rc = worker_submit_sub(job, 0, 1, NULL, 0);
    snprintf(f->second_msg, sizeof(f->second_msg), "%s", worker_job_error(job));
    return 0;
}

static void subsequent_submit_raises_after_failure(void **state)
{
    mpfw_tree *t;
    _Atomic unsigned *counter = rt_shared_counters(1);
    worker *w = tree_with_callables("L3{sub*2}", counter, &t);
    struct fail_fast f = { -1, 0, "" };

    assert_int_equal(worker_run(w, fail_then_submit, &f), -EIO);
    assert_int_equal(f.first, 0);
    /* The second submit failed fast with the original message … */
    assert_int_equal(f.second_rc, -EIO);
    assert_string_equal(f.second_msg,
                        "sub_worker: SentinelError: boom-from-sub");
    /* … and nothing was submitted. */
    assert_int_equal(atomic_load(counter), 0);
    assert_string_equal(worker_last_error(w),
                        "sub_worker: SentinelError: boom-from-sub");
    rt_shared_free(counter, 1);
}

/* L4 -> L3 -> sub: the L3 runs an orchestration callable of its own. */
static int l3_orch(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_sub(job, 0, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static int l4_orch(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_next(job, 0, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static void bottom_sub_failure_surfaces_at_l4(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    assert_int_equal(mpfw_tree_new(&t, "L4{L3{sub}}", &o), 0);
    worker *w = mpfw_tree_root(t), *l3 = mpfw_tree_find(t, "next.0");
    assert_int_equal(worker_register_sub(l3, "raises", raises,
                                         (void *)l3_sub_boom),
                     0);
    assert_int_equal(worker_register_orch(l3, "l3_orch", l3_orch, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_run(w, l4_orch, NULL), -EIO);
    assert_contains(worker_last_error(w), "child_worker");
    assert_contains(worker_last_error(w), "sub_worker");
    assert_contains(worker_last_error(w), "SentinelError");
    assert_contains(worker_last_error(w), "l3-sub-boom");
    assert_string_equal(worker_last_error(w),
                        "child_worker level=3: sub_worker: SentinelError: "
                        "l3-sub-boom");
}

/* ---- beyond the port: the rest of the chain's contract ---- */

static char long_text[400];

static int l4_passes_through(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_next(job, 0, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static void error_chain_is_truncated_to_255_bytes_per_hop(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    memset(long_text, 'x', sizeof(long_text) - 1);
    assert_int_equal(mpfw_tree_new(&t, "L5{L4{L3{sub}}}", &o), 0);
    worker *w = mpfw_tree_root(t), *l4 = mpfw_tree_find(t, "next.0"),
           *l3 = mpfw_tree_find(t, "next.0/next.0");
    assert_int_equal(worker_register_sub(l3, "raises", raises, long_text), 0);
    assert_int_equal(worker_register_orch(l3, "l3_orch", l3_orch, NULL), 0);
    assert_int_equal(worker_register_orch(l4, "l4_orch", l4_passes_through,
                                          NULL),
                     0);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_run(w, l4_orch, NULL), -EIO);
    const char *e = worker_last_error(w);
    assert_int_equal(strlen(e), 255);
    assert_true(
        strncmp(e,
                "child_worker level=4: child_worker level=3: sub_worker: "
                "SentinelError: xxxx",
                75) == 0);
}

struct chip_fail {
    int fail_task, after_same_chip, after_dep, after_poisoned, independent;
};

/* Chip 1's kernel fails; the next task on chip 1 (in order per target) and
   a task on chip 0 that names it as a dependency are poisoned, and so is
   the task after that one on chip 0 (it depends on its predecessor there);
   a task on chip 2 runs. The failing chip is held at its task start until
   everything is submitted, so the poisoning (not the fail-fast) is what is
   observed. */
static int chip_fail_orch(worker_job *job, void *arg)
{
    struct chip_fail *c = arg;
    worker_task dep = WORKER_TASK_INIT;
    int deps[1];

    c->fail_task = worker_submit_chip(job, 1, WORKER_KERNEL_FAIL, NULL, 0);
    c->after_same_chip = worker_submit_chip(job, 1, WORKER_KERNEL_NOOP, NULL,
                                            0);
    deps[0] = c->fail_task;
    dep.kind = WORKER_CHILD_CHIP;
    dep.target = 0;
    dep.callable = WORKER_KERNEL_NOOP;
    dep.deps = deps;
    dep.ndeps = 1;
    c->after_dep = worker_submit_task(job, &dep);
    c->after_poisoned = worker_submit_chip(job, 0, WORKER_KERNEL_NOOP, NULL, 0);
    c->independent = worker_submit_chip(job, 2, WORKER_KERNEL_NOOP, NULL, 0);
    return 0;
}

static int noops_on_both_chips(worker_job *job, void *arg)
{
    (void)arg;
    if (worker_submit_chip(job, 1, WORKER_KERNEL_NOOP, NULL, 0) < 0 ||
        worker_submit_chip(job, 0, WORKER_KERNEL_NOOP, NULL, 0) < 0)
        return -EPROTO;
    return 0;
}

static void failed_task_poisons_its_dependents_only(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    worker_job *job;
    mpfw_options o = rt_fast_options();
    struct chip_fail c;

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = "chip.1:task_begin=gate_wait(0)";
    assert_int_equal(mpfw_tree_new(&t, "L3{chip*3}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_submit(w, chip_fail_orch, &c, &job), 0);
    worker_gate_open(g, 0);
    assert_int_equal(worker_wait(job, 5.0), -EIO);
    /* First error wins: the kernel's, with the chip prefix. */
    assert_string_equal(worker_job_error(job),
                        "chip dev=1: kernel fail on device 1");
    assert_int_equal(worker_job_result(job, c.fail_task, NULL), -EIO);
    assert_int_equal(worker_job_result(job, c.after_same_chip, NULL), -EIO);
    assert_int_equal(worker_job_result(job, c.after_dep, NULL), -EIO);
    assert_int_equal(worker_job_result(job, c.after_poisoned, NULL), -EIO);
    assert_int_equal(worker_job_result(job, c.independent, NULL), 0);
    worker_job_free(job);
    /* The next run is clean, on the same chips. */
    assert_int_equal(worker_run(w, noops_on_both_chips, NULL), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    worker_gates_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(sub_callable_raises_surfaces_at_run, 5000),
        mpfw_unit_test(sub_callable_missing_id_surfaces, 5000),
        mpfw_unit_test(orchestration_exception_is_synchronous, 5000),
        mpfw_unit_test(failure_does_not_wedge_worker, 5000),
        mpfw_unit_test(subsequent_submit_raises_after_failure, 5000),
        mpfw_unit_test(bottom_sub_failure_surfaces_at_l4, 5000),
        mpfw_unit_test(error_chain_is_truncated_to_255_bytes_per_hop, 5000),
        mpfw_unit_test(failed_task_poisons_its_dependents_only, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
