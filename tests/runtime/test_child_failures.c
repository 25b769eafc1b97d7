/* SPDX-License-Identifier: MIT */
/*
 * test_child_failures.c — how a child's failure or death reaches the
 * caller when nobody wrote a message for it, when the program reaped the
 * child itself, when no sub is left for a WORKER_ANY task, and when a run
 * that does not drain is abandoned by worker_free(): each with its exact
 * text or report, nothing left behind. Every case under the fixture's
 * guard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"

static int quiet_init_failure(void *arg, unsigned index, char *msg,
                              size_t msg_size)
{
    (void)arg;
    (void)msg;
    (void)msg_size;
    return index == 1;
}

static void init_failures_without_a_message_get_a_default_one(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w;

    o.sub_init = quiet_init_failure;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub*2}", &o), -EIO);
    w = mpfw_tree_root(t);
    assert_contains(worker_last_error(w), "sub worker 1 (pid ");
    assert_contains(worker_last_error(w),
                    "failed during init: sub_worker: sub init hook failed");

    /* A fault's "fail" without text. */
    o = rt_fast_options();
    o.faults = "chip.0:setup_end=fail";
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{chip}", &o), -EIO);
    w = mpfw_tree_root(t);
    assert_contains(worker_last_error(w), "chip worker 0 (pid ");
    assert_contains(worker_last_error(w), "injected fault");
}

struct reaper {
    worker_gates *g;
    pid_t pid;
    int status;
};

/* Once close() is held at its first point (gate 0): kill the child, reap
   it here, then let close() go on. */
static void *reap_it_ourselves(void *arg)
{
    struct reaper *r = arg;

    r->status = 0;
    if (worker_gate_await_arrivals(r->g, 0, 1, 5000) == 0 &&
        kill(r->pid, SIGKILL) == 0 && waitpid(r->pid, &r->status, 0) != r->pid)
        r->status = -1;
    worker_gate_open(r->g, 0);
    return NULL;
}

/* The program reaps a child of the tree itself (a waitpid of its own)
   while close() runs, after the scheduler stopped watching: close cannot
   have its status any more, says so, and still converges. */
static void child_reaped_behind_the_runtimes_back_is_reported(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_rollback_report rep;
    struct reaper r;
    pthread_t th;

    assert_int_equal(worker_gates_new(&r.g), 0);
    o.faults = "root:close_begin=gate_wait(0)";
    o.gates = r.g;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub*2}", &o), 0);
    worker *w = mpfw_tree_root(t);
    r.pid = rt_child_pid(w, WORKER_CHILD_SUB, 1);
    assert_int_equal(pthread_create(&th, NULL, reap_it_ourselves, &r), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    pthread_join(th, NULL);
    assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);

    char want[96];
    snprintf(want, sizeof(want), "sub 1 (pid %d) reaped elsewhere", (int)r.pid);
    assert_contains(worker_last_error(w), want);
    assert_int_equal(worker_last_close(w, &rep), 0);
    assert_int_equal(rep.n, 2);
    assert_int_equal(rep.entries[1].pid, r.pid);
    assert_int_equal(rep.entries[1].wait_status, -1);
    assert_int_equal(rep.entries[0].disposition, WORKER_DISP_GRACEFUL);
    assert_int_equal(rep.entries[0].wait_status, 0);
    worker_gates_free(r.g);
}

static int any_sub_task(worker_job *job, void *arg)
{
    (void)arg;
    int id = worker_submit_sub(job, WORKER_ANY, 0, NULL, 0);
    return id < 0 ? id : 0;
}

static void any_task_without_a_live_sub_fails_at_once(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t v;

    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "noop", rt_noop_sub, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_SUB, 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    /* A command fails once the scheduler saw the death: from then on the
       endpoint is poisoned. */
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, WORKER_WAIT_FOREVER, &v),
                     -EIO);

    rt_run_fails_with(w, any_sub_task, NULL,
                      "sub_worker: no live sub worker for task 0");
    assert_int_equal(mpfw_tree_close(t), 0);
}

static int long_sleep(worker_job *job, void *arg)
{
    (void)arg;
    uint64_t ms = 60000;
    int id = worker_submit_chip(job, 0, WORKER_KERNEL_SLEEP, &ms, 1);
    return id < 0 ? id : 0;
}

/* Options of a tree whose runs cannot drain within close(). */
static worker_options undrainable(int level)
{
    worker_options o = WORKER_OPTIONS_INIT;
    o.level = level;
    o.startup_timeout_s = 5;
    o.close_timeout_s = 5;
    o.drain_timeout_s = 0.05;
    return o;
}

/* Run fn on READY w, detached; close() gives up on draining it and tears
   nothing down (child, whose work it is, lives on); worker_free() then
   abandons the run and reaps child at once. */
static void free_after_a_failed_drain(worker *w, worker_orch_fn fn, pid_t child)
{
    worker_job *job;

    assert_int_equal(worker_submit(w, fn, NULL, &job), 0);
    worker_job_free(job); /* detached: close() must drain it */
    assert_int_equal(worker_close(w), -ETIMEDOUT);
    assert_contains(worker_last_error(w), "teardown deferred to the next "
                                          "close()");
    assert_alive(child);
    double t0 = rt_now_s();
    worker_free(w);
    assert_true(rt_now_s() - t0 < rt_bound_s(2.0));
    assert_reaped(child);
}

/* The chip's 60 s sleep ends at the SHUTDOWN. */
static void free_abandons_a_run_that_does_not_drain(void **state)
{
    (void)state;
    worker_options o = undrainable(3);
    worker *w;

    o.num_chips = 1;
    assert_int_equal(worker_new(&w, &o), 0);
    assert_int_equal(worker_init(w), 0);
    free_after_a_failed_drain(w, long_sleep,
                              rt_child_pid(w, WORKER_CHILD_CHIP, 0));
}

/* Device memory of a chip that died: the parent cannot ask the chip to
   free it, so it releases the name itself. */
static void memory_of_a_dead_chip_is_released_by_the_parent(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p;
    uint64_t v;
    char path[128];

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_device_alloc(w, 0, 4096, &p), 0);
    /* The region's name: the tree's prefix, the chip, the region id. */
    snprintf(path, sizeof(path), "/dev/shm%schip-0.dev.%u",
             worker_shm_prefix(w), WORKER_DEVPTR_REGION(p));
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(kill(rt_child_pid(w, WORKER_CHILD_CHIP, 0), SIGKILL), 0);
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 0,
                                    WORKER_CONTROL_PING, 0, WORKER_WAIT_FOREVER,
                                    &v),
                     -EIO);
    assert_int_equal(worker_device_free(w, 0, p), 0);
    assert_int_equal(worker_device_allocations(w), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(mpfw_tree_close(t), 0);
}

static int next_level_task(worker_job *job, void *arg)
{
    (void)arg;
    int id = worker_submit_next(job, 0, 0, NULL, 0);
    return id < 0 ? id : 0;
}

/* The same for a next-level task: the next-level child, waiting for its
   own run (a 60 s sleep on its chip), leaves at the SHUTDOWN instead of
   finishing it, and its subtree goes with it. */
static void free_abandons_a_next_level_run(void **state)
{
    (void)state;
    worker_options o = undrainable(4);
    worker *w, *n;

    assert_int_equal(worker_new(&w, &o), 0);
    o = undrainable(3);
    o.num_chips = 1;
    assert_int_equal(worker_new(&n, &o), 0);
    assert_int_equal(worker_add_child(w, n), 0);
    assert_int_equal(worker_register_orch(n, "sleep", long_sleep, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    free_after_a_failed_drain(w, next_level_task,
                              rt_child_pid(w, WORKER_CHILD_NEXT, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(init_failures_without_a_message_get_a_default_one, 5000),
        mpfw_unit_test(child_reaped_behind_the_runtimes_back_is_reported, 5000),
        mpfw_unit_test(any_task_without_a_live_sub_fails_at_once, 5000),
        mpfw_unit_test(free_abandons_a_run_that_does_not_drain, 5000),
        mpfw_unit_test(free_abandons_a_next_level_run, 5000),
        mpfw_unit_test(memory_of_a_dead_chip_is_released_by_the_parent, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
