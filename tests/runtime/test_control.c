/* SPDX-License-Identifier: MIT */
/*
 * test_control.c — control commands (CONTROL_REQUEST / CONTROL_DONE on a
 * child's base frame): the SHUTDOWN-clobber race of simpler #1562 made
 * deterministic with a gate (after simpler's test_admission_fence.py
 * TestOneWayShutdown::test_shutdown_survives_an_in_flight_control_command),
 * deadlines that poison the endpoint, child errors and liveness. Every
 * case under the fixture's guard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"
#include "testing.h" /* worker_child_mailbox_state() */

/* MailboxState values (the wire format; simpler's numbering). */
enum { MB_SHUTDOWN = 3, MB_CONTROL_REQUEST = 4, MB_CONTROL_DONE = 5 };

static void ping_returns_the_child_pid(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t r = 0;

    assert_int_equal(mpfw_tree_spin_up(&t, "L4{sub,L3{chip}}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 2.0, &r),
                     0);
    assert_int_equal((pid_t)r, rt_child_pid(w, WORKER_CHILD_SUB, 0));
    assert_int_equal(worker_control(w, WORKER_CHILD_NEXT, 0,
                                    WORKER_CONTROL_PING, 0, WORKER_WAIT_FOREVER,
                                    &r),
                     0);
    assert_int_equal((pid_t)r, rt_child_pid(w, WORKER_CHILD_NEXT, 0));
    /* The base frame is back to IDLE after every command. */
    assert_int_equal(worker_child_mailbox_state(w, WORKER_CHILD_SUB, 0), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
}

/* ---- simpler #1562 ---- */

struct ctl_call {
    worker *w;
    int rc;
};

static void *control_in_thread(void *arg)
{
    struct ctl_call *c = arg;
    uint64_t r;

    c->rc = worker_control(c->w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING, 0,
                           WORKER_WAIT_FOREVER, &r);
    return NULL;
}

/*
 * One interleaving, forced by gates: the child takes CONTROL_REQUEST and is
 * held inside its control handler (gate 0); the parent closes: SHUTDOWN is
 * stored (sticky word, then the state word) while the command is in
 * flight; only then (close_after_broadcast) does the gate open. The child
 * finishes the handler and stores CONTROL_DONE over SHUTDOWN. The state
 * word alone would now say "keep serving"; the sticky word ends the child
 * anyway: it exits 0 on its own, without SIGKILL.
 */
static void one_clobber(worker_gates *g, unsigned round)
{
    worker_options o = WORKER_OPTIONS_INIT;
    struct ctl_call call;
    worker_rollback_report r;
    pthread_t th;
    worker *w;

    o.num_subs = 1;
    o.close_timeout_s = 2;
    o.gates = g;
    o.faults =
        "sub.0:control=gate_wait(0);root:close_after_broadcast=gate_open(0)";
    worker_gate_reset(g, 0);
    assert_int_equal(worker_new(&w, &o), 0);
    assert_int_equal(worker_init(w), 0);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_SUB, 0);
    call.w = w;
    call.rc = 1;
    assert_int_equal(pthread_create(&th, NULL, control_in_thread, &call), 0);
    /* The child is in its handler: CONTROL_REQUEST was stored and taken. */
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    assert_int_equal(worker_child_mailbox_state(w, WORKER_CHILD_SUB, 0),
                     MB_CONTROL_REQUEST);
    /* Close stores SHUTDOWN, then opens the gate (fault point). */
    assert_int_equal(worker_close(w), 0);
    pthread_join(th, NULL);
    /* The caller was not left hanging: close failed the command. */
    assert_int_equal(call.rc, -ESHUTDOWN);
    assert_int_equal(worker_last_close(w, &r), 0);
    assert_int_equal(r.n, 1);
    if (r.entries[0].mailbox_state != MB_CONTROL_DONE)
        fail_msg("round %u: state word %u, expected CONTROL_DONE (5) over "
                 "SHUTDOWN",
                 round, r.entries[0].mailbox_state);
    assert_int_equal(r.entries[0].pid, pid);
    assert_int_equal(r.entries[0].disposition, WORKER_DISP_GRACEFUL);
    assert_true(WIFEXITED(r.entries[0].wait_status));
    assert_int_equal(WEXITSTATUS(r.entries[0].wait_status), 0);
    assert_int_equal(r.killed, 0);
    assert_reaped(pid);
    worker_free(w);
}

static void shutdown_survives_an_in_flight_control_command(void **state)
{
    worker_gates *g;

    assert_int_equal(worker_gates_new(&g), 0);
    for (unsigned i = 0; i < 100; i++)
        one_clobber(g, i);
    worker_gates_free(g);
}

/* ---- deadlines, errors, liveness ---- */

static int task_on(worker_job *job, void *arg)
{
    int t = worker_submit_sub(job, *(int *)arg, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static int nothing(void *arg, const void *args, size_t len, char *msg,
                   size_t size)
{
    (void)arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)size;
    return 0;
}

static void timed_out_control_poisons_the_endpoint(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = rt_fast_options();
    uint64_t r;
    int sub0 = 0, sub1 = 1;

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = "sub.0:control=gate_wait(0)";
    assert_int_equal(mpfw_tree_new(&t, "L3{sub*2}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "nothing", nothing, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_SUB, 0);

    double t0 = rt_now_s();
    int rc = worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING, 0, 0.1,
                            &r);
    double dt = rt_now_s() - t0;
    assert_int_equal(rc, -ETIMEDOUT);
    assert_contains(worker_last_error(w),
                    "sub_worker: control ping timed out after");
    assert_true(dt >= 0.1 && dt < 0.1 + rt_bound_s(0.2));
    /* Poisoned (sticky): later commands and tasks fail fast with the
       reason; the other sub is untouched. */
    t0 = rt_now_s();
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, WORKER_WAIT_FOREVER, &r),
                     -EIO);
    assert_contains(worker_last_error(w), "timed out");
    assert_int_equal(worker_run(w, task_on, &sub0), -EIO);
    assert_contains(worker_last_error(w), "control ping timed out");
    assert_true(rt_now_s() - t0 < rt_bound_s(0.1));
    assert_int_equal(worker_run(w, task_on, &sub1), 0);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 1, WORKER_CONTROL_PING,
                                    0, 2.0, &r),
                     0);
    /* The poisoned child was told to shut down: once its handler is let
       go it leaves on its own (exit 0). */
    worker_gate_open(g, 0);
    assert_int_equal(rt_await_exit(pid, (int)(rt_bound_s(2.0) * 1000)), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    worker_rollback_report rep;
    assert_int_equal(worker_last_close(w, &rep), 0);
    assert_int_equal(rep.killed, 0);
    worker_gates_free(g);
}

static void
control_error_from_the_child_surfaces_without_poisoning(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t r;

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub,chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0,
                                    WORKER_CONTROL_DEVICE_REGIONS, 0, 2.0, &r),
                     -EIO);
    assert_string_equal(worker_last_error(w),
                        "sub_worker: control device_regions failed on child: "
                        "not a chip");
    /* A child's error is an answer, not a broken endpoint. */
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 2.0, &r),
                     0);
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 0,
                                    WORKER_CONTROL_DEVICE_REGIONS, 0, 2.0, &r),
                     0);
    assert_int_equal(r, 0);
    assert_int_equal(mpfw_tree_close(t), 0);
}

static void control_to_a_child_that_died_fails_with_its_status(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t r;

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub*2}", &o), 0);
    worker *w = mpfw_tree_root(t);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_SUB, 1);
    assert_int_equal(kill(pid, SIGKILL), 0);
    double t0 = rt_now_s();
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 1, WORKER_CONTROL_PING,
                                    0, WORKER_WAIT_FOREVER, &r),
                     -EIO);
    assert_true(rt_now_s() - t0 < rt_bound_s(0.1));
    assert_contains(worker_last_error(w), "sub_worker: child process pid");
    assert_contains(worker_last_error(w), "killed by signal 9 (KILL)");
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 2.0, &r),
                     0);
    assert_int_equal(mpfw_tree_close(t), 0);
}

/* The child dies while it handles the command (a self-SIGKILL in the
   handler): the caller gets its status at once, not a deadline. */
static void
child_dying_in_its_control_handler_fails_the_command_at_once(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t r;

    o.faults = "chip.0:control=sigkill";
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    double t0 = rt_now_s();
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 0,
                                    WORKER_CONTROL_PING, 0, 10.0, &r),
                     -EIO);
    assert_true(rt_now_s() - t0 < rt_bound_s(0.1));
    assert_contains(worker_last_error(w), "chip dev=0: child process pid");
    assert_contains(worker_last_error(w),
                    "died during control ping (killed by signal 9");
    assert_int_equal(mpfw_tree_close(t), 0);
}

static void control_arguments_and_states_are_checked(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    uint64_t r;

    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_control(NULL, WORKER_CHILD_SUB, 0,
                                    WORKER_CONTROL_PING, 0, 1.0, &r),
                     -EINVAL);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 1.0, &r),
                     -EPERM);
    assert_contains(worker_last_error(w), "not initialized");
    assert_int_equal(worker_init(w), 0);
    /* Device sub-commands are internal: the device memory API uses them. */
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0,
                                    (worker_control_cmd)0x100, 0, 1.0, &r),
                     -EINVAL);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, NAN, &r),
                     -EINVAL);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, INFINITY, &r),
                     -EINVAL);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 3, WORKER_CONTROL_PING,
                                    0, 1.0, &r),
                     -ENOENT);
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 0,
                                    WORKER_CONTROL_PING, 0, 1.0, &r),
                     -ENOENT);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 1.0, &r),
                     -ESHUTDOWN);
}

/* A second command to a child waits for the slot the first one holds
   (held in the child's handler at gate 0): its deadline ends that wait
   with -ETIMEDOUT, and since it was never issued nothing is poisoned. */
static void command_waiting_for_a_busy_child_times_out_unissued(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_gates *g;
    pthread_t th;
    uint64_t r;

    assert_int_equal(worker_gates_new(&g), 0);
    o.faults = "sub.0:control=gate_wait(0)";
    o.gates = g;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    struct ctl_call first = { w, 1 };
    assert_int_equal(pthread_create(&th, NULL, control_in_thread, &first), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 5000), 0);

    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 0.05, &r),
                     -ETIMEDOUT);
    assert_string_equal(worker_last_error(w),
                        "control ping timed out waiting for another command "
                        "on that child");
    assert_int_equal(worker_gate_open(g, 0), 0);
    pthread_join(th, NULL);
    assert_int_equal(first.rc, 0);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 5.0, &r),
                     0);
    assert_int_equal((pid_t)r, rt_child_pid(w, WORKER_CHILD_SUB, 0));
    /* The protocol tests' view of a mailbox: no such child, no handle. */
    assert_int_equal(worker_child_mailbox_state(w, WORKER_CHILD_CHIP, 0),
                     -ENOENT);
    assert_int_equal(worker_child_mailbox_state(NULL, WORKER_CHILD_SUB, 0),
                     -EINVAL);
    assert_int_equal(mpfw_tree_close(t), 0);
    worker_gates_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(ping_returns_the_child_pid, 5000),
        mpfw_unit_test(shutdown_survives_an_in_flight_control_command, 20000),
        mpfw_unit_test(timed_out_control_poisons_the_endpoint, 5000),
        mpfw_unit_test(control_error_from_the_child_surfaces_without_poisoning,
                       5000),
        mpfw_unit_test(control_to_a_child_that_died_fails_with_its_status,
                       5000),
        mpfw_unit_test(
            child_dying_in_its_control_handler_fails_the_command_at_once, 5000),
        mpfw_unit_test(control_arguments_and_states_are_checked, 5000),
        mpfw_unit_test(command_waiting_for_a_busy_child_times_out_unissued,
                       5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
