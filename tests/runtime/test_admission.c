/* SPDX-License-Identifier: MIT */
/*
 * test_admission.c — every (operation, state) pair of the admission table
 * (runtime/src/admission.c), walked through the public API. The
 * expectations are written out here, cell by cell, not read from the
 * table: a wrong cell in the table fails its case.
 *
 * The subject is always an L4 with one next-level L3 of one chip (so
 * add_child has a parent that may take children). Operations:
 *   init       worker_init(root)
 *   add_child  worker_add_child(root, a fresh L3)
 *   register   worker_register_sub(root, …)
 *   run        worker_run(root, …)        \
 *   control    worker_control(root, …)     > need READY
 *   device     worker_device_alloc(root, …) /
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include <mpfixture/mpfixture.h>
#include "rt_helpers.h"

static int noop_sub(void *arg, const void *args, size_t len, char *msg,
                    size_t msg_size)
{
    (void)arg, (void)args, (void)len, (void)msg, (void)msg_size;
    return 0;
}

static int noop_orch(worker_job *job, void *arg)
{
    (void)job, (void)arg;
    return 0;
}

enum op {
    OP_INIT,
    OP_ADD_CHILD,
    OP_REGISTER,
    OP_RUN,
    OP_CONTROL,
    OP_DEVICE,
    OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "init", "add_child", "register", "run", "control", "device",
};

/* Call one operation on root; a NEW child made for add_child is owned by
   root if it was accepted, else freed here. */
static int call(worker *root, enum op op)
{
    uint64_t r;
    worker_devptr p;
    switch (op) {
    case OP_INIT:
        return worker_init(root);
    case OP_ADD_CHILD: {
        worker *child;
        worker_options o = WORKER_OPTIONS_INIT;
        o.num_chips = 1;
        assert_int_equal(worker_new(&child, &o), 0);
        int rc = worker_add_child(root, child);
        if (rc < 0)
            worker_free(child);
        return rc;
    }
    case OP_REGISTER:
        return worker_register_sub(root, "noop", noop_sub, NULL);
    case OP_RUN:
        return worker_run(root, noop_orch, NULL);
    case OP_CONTROL:
        return worker_control(root, WORKER_CHILD_NEXT, 0, WORKER_CONTROL_PING,
                              0, 5.0, &r);
    case OP_DEVICE:
        return worker_device_alloc(root, 0, 64, &p);
    default:
        fail_msg("no such operation");
    }
    return 0;
}

/* A refusal: exactly this errno and this text in the worker's error. */
static void expect_refused(worker *root, enum op op, int rc, const char *text)
{
    int got = call(root, op);
    if (got != rc)
        fail_msg("%s: returned %d, expected %d (%s)", op_names[op], got, rc,
                 worker_last_error(root));
    assert_contains(worker_last_error(root), text);
}

/* Admitted: whatever the operation then does, not one of the table's
   refusals. */
static void expect_admitted(worker *root, enum op op, int rc)
{
    int got = call(root, op);
    if (got != rc)
        fail_msg("%s: returned %d, expected %d (%s)", op_names[op], got, rc,
                 worker_last_error(root));
}

static mpfw_tree *tree(const char *spec, const char *faults, worker_gates *g,
                       bool init)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    o.faults = faults;
    o.gates = g;
    int rc = init ? mpfw_tree_spin_up(&t, spec, &o)
                  : mpfw_tree_new(&t, spec, &o);
    (void)rc;
    return t;
}

static void state_new(void **state)
{
    (void)state;
    mpfw_tree *t = tree("L4{sub,L3{chip}}", NULL, NULL, false);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_get_state(w), WORKER_NEW);
    expect_refused(w, OP_RUN, -EPERM, "run: not initialized");
    expect_refused(w, OP_CONTROL, -EPERM, "control: not initialized");
    expect_refused(w, OP_DEVICE, -EPERM, "device_alloc: not initialized");
    assert_true(call(w, OP_REGISTER) >= 0);
    assert_true(call(w, OP_ADD_CHILD) >= 0);
    expect_admitted(w, OP_INIT, 0);
    assert_int_equal(mpfw_tree_close(t), 0);
}

struct waiter {
    worker *root;
    enum op op;
    int rc;
    pthread_t thread;
    int hold; /* >= 0: after the call, stay until this pipe closes */
};

static void *call_in_thread(void *arg)
{
    struct waiter *x = arg;
    x->rc = call(x->root, x->op);
    if (x->hold >= 0) {
        /* The thread that ran worker_init() must outlive the tree: the
           children's parent-death signal follows it (worker.h). */
        char c;
        while (read(x->hold, &c, 1) < 0 && errno == EINTR)
            ;
    }
    return NULL;
}

/* INITIALIZING: the chip holds the epoch at a gate. add_child and
   register are refused at once; init, run, control and device wait for
   the epoch and take its outcome (READY: each then does its work). */
static void state_initializing(void **state)
{
    (void)state;
    worker_gates *g;
    assert_int_equal(worker_gates_new(&g), 0);
    /* Gate 0 holds the epoch; gate 1 counts the callers that reached the
       wait for it (the init_wait point), so none comes after the epoch. */
    mpfw_tree *t = tree("L4{sub,L3{chip}}",
                        "next.0/chip.0:setup_begin=gate_wait(0);"
                        "root:init_wait=gate_wait(1)",
                        g, false);
    worker *w = mpfw_tree_root(t);
    int hold[2];
    assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
    struct waiter first = { w, OP_INIT, -1, 0, hold[0] };
    assert_int_equal(pthread_create(&first.thread, NULL, call_in_thread,
                                    &first),
                     0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 5000), 0);
    assert_int_equal(worker_get_state(w), WORKER_INITIALIZING);
    expect_refused(w, OP_ADD_CHILD, -EBUSY,
                   "add_child before init: worker is INITIALIZING");
    expect_refused(w, OP_REGISTER, -EBUSY, "(worker is INITIALIZING)");
    struct waiter waiting[] = {
        { w, OP_INIT, -1, 0, -1 },
        { w, OP_RUN, -1, 0, -1 },
        { w, OP_CONTROL, -1, 0, -1 },
        { w, OP_DEVICE, -1, 0, -1 },
    };
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&waiting[i].thread, NULL,
                                        call_in_thread, &waiting[i]),
                         0);
    assert_int_equal(worker_gate_await_arrivals(g, 1, 4, 5000), 0);
    assert_int_equal(worker_gate_open(g, 1), 0);
    assert_int_equal(worker_gate_open(g, 0), 0);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pthread_join(waiting[i].thread, NULL), 0);
    /* Each took the epoch's outcome (READY) and went on: a call that had
       not waited would have said -EINPROGRESS or "not initialized". */
    assert_int_equal(waiting[0].rc, 0); /* init: the epoch's 0 */
    assert_int_equal(waiting[1].rc, 0); /* run */
    if (waiting[2].rc != 0)
        fail_msg("control after waiting: %d (%s)", waiting[2].rc,
                 worker_last_error(w));
    assert_int_equal(waiting[3].rc, -EINVAL); /* device: an L4 has no chip */
    assert_contains(worker_last_error(w), "no chip 0");
    assert_int_equal(mpfw_tree_close(t), 0);
    close(hold[1]);
    assert_int_equal(pthread_join(first.thread, NULL), 0);
    close(hold[0]);
    assert_int_equal(first.rc, 0);
    worker_gates_free(g);
}

static void state_ready(void **state)
{
    (void)state;
    mpfw_tree *t = tree("L4{sub,L3{chip}}", NULL, NULL, true);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_get_state(w), WORKER_READY);
    expect_refused(w, OP_INIT, -EALREADY, "already initialized");
    expect_refused(w, OP_ADD_CHILD, -EBUSY,
                   "add_child before init: worker is READY");
    expect_refused(w, OP_REGISTER, -EBUSY,
                   "register before init: callables are copied into the "
                   "children when they are forked (worker is READY)");
    expect_admitted(w, OP_RUN, 0);
    expect_admitted(w, OP_CONTROL, 0);
    expect_admitted(w, OP_DEVICE, -EINVAL); /* admitted; an L4 has no chip */
    assert_contains(worker_last_error(w), "no chip 0");
    assert_int_equal(mpfw_tree_close(t), 0);
}

static void state_failed(void **state)
{
    (void)state;
    mpfw_tree *t = tree("L4{sub,L3{chip:fail(no)}}", NULL, NULL, true);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_get_state(w), WORKER_FAILED);
    expect_refused(w, OP_INIT, -EPERM,
                   "startup failed; close this worker and create a new one");
    expect_refused(w, OP_ADD_CHILD, -EBUSY,
                   "add_child before init: worker is FAILED");
    expect_refused(w, OP_REGISTER, -EPERM, "register: startup failed");
    expect_refused(w, OP_RUN, -EPERM, "run: startup failed");
    expect_refused(w, OP_CONTROL, -EPERM, "control: startup failed");
    expect_refused(w, OP_DEVICE, -EPERM, "device_alloc: startup failed");
    assert_int_equal(mpfw_tree_close(t), 0);
}

static void state_closed(void **state)
{
    (void)state;
    mpfw_tree *t = tree("L4{sub,L3{chip}}", NULL, NULL, true);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_close(w), 0);
    assert_int_equal(worker_get_state(w), WORKER_CLOSED);
    expect_refused(w, OP_INIT, -ESHUTDOWN, "worker is closed");
    expect_refused(w, OP_ADD_CHILD, -EBUSY,
                   "add_child before init: worker is CLOSED");
    expect_refused(w, OP_REGISTER, -ESHUTDOWN, "register: worker is closed");
    expect_refused(w, OP_RUN, -ESHUTDOWN, "run: worker is closed");
    expect_refused(w, OP_CONTROL, -ESHUTDOWN, "control: worker is closed");
    expect_refused(w, OP_DEVICE, -ESHUTDOWN, "device_alloc: worker is closed");
    assert_int_equal(mpfw_tree_close(t), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(state_new, 10000),
        mpf_unit_test(state_initializing, 10000),
        mpf_unit_test(state_ready, 10000),
        mpf_unit_test(state_failed, 10000),
        mpf_unit_test(state_closed, 10000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
