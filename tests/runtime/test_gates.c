/* SPDX-License-Identifier: MIT */
/*
 * test_gates.c — the gates API (worker.h "Gates"): arrivals counted by
 * gate_wait in forked children, awaited with a bound, reset; a bad index
 * or handle refused; and a fault spec that names a gate without the
 * options' gates gets an internal set of its own. Every case under the
 * fixture's guard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"

static void bad_handles_and_indexes_are_refused(void **state)
{
    (void)state;
    worker_gates *g;

    assert_int_equal(worker_gates_new(NULL), -EINVAL);
    assert_int_equal(worker_gates_new(&g), 0);
    assert_int_equal(worker_gate_open(NULL, 0), -EINVAL);
    assert_int_equal(worker_gate_open(g, WORKER_GATES_COUNT), -EINVAL);
    assert_int_equal(worker_gate_reset(NULL, 0), -EINVAL);
    assert_int_equal(worker_gate_reset(g, WORKER_GATES_COUNT), -EINVAL);
    assert_int_equal(worker_gate_arrivals(NULL, 0), 0);
    assert_int_equal(worker_gate_arrivals(g, WORKER_GATES_COUNT), 0);
    assert_int_equal(worker_gate_await_arrivals(NULL, 0, 1, 10), -EINVAL);
    assert_int_equal(worker_gate_await_arrivals(g, WORKER_GATES_COUNT, 1, 10),
                     -EINVAL);
    /* Nothing arrives at a fresh gate: the await ends at its bound. */
    double t0 = rt_now_s();
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 20), -ETIMEDOUT);
    assert_true(rt_now_s() - t0 >= 0.02);
    /* Zero arrivals are reached at once. */
    assert_int_equal(worker_gate_await_arrivals(g, 0, 0, 0), 0);
    worker_gates_free(g);
    worker_gates_free(NULL);
}

static void arrivals_are_counted_awaited_and_reset(void **state)
{
    (void)state;
    worker_gates *g;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    assert_int_equal(worker_gates_new(&g), 0);
    /* Gate 3 open: each sub counts its arrival and goes on. */
    assert_int_equal(worker_gate_open(g, 3), 0);
    o.faults = "sub.*:setup_begin=gate_wait(3)";
    o.gates = g;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub*3}", &o), 0);
    assert_int_equal(worker_gate_arrivals(g, 3), 3);
    assert_int_equal(worker_gate_await_arrivals(g, 3, 3, 0), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 3, 4, 20), -ETIMEDOUT);
    assert_int_equal(mpfw_tree_close(t), 0);
    /* Reset: closed again, no arrivals. */
    assert_int_equal(worker_gate_reset(g, 3), 0);
    assert_int_equal(worker_gate_arrivals(g, 3), 0);
    worker_gates_free(g);
}

static void a_fault_naming_a_gate_gets_an_internal_set(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    /* No gates in the options: gate 5 of the runtime's own set is closed,
       so gate_fail fails sub 0's init; without a set it would not fail. */
    o.faults = "sub.0:setup_end=gate_fail(5)";
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub}", &o), -EIO);
    assert_contains(worker_last_error(mpfw_tree_root(t)), "sub worker 0 (pid ");
    assert_contains(worker_last_error(mpfw_tree_root(t)), "gate 5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(bad_handles_and_indexes_are_refused, 5000),
        mpfw_unit_test(arrivals_are_counted_awaited_and_reset, 5000),
        mpfw_unit_test(a_fault_naming_a_gate_gets_an_internal_set, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
