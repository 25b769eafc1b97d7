/* SPDX-License-Identifier: MIT */
/*
 * test_chips.c — a tree of fake chips for a guarded case, from the
 * fakechips companion: the case builds it, the case's teardown closes it,
 * and the guard checks that nothing of it outlives the case. Built with
 * MPFIXTURE_OLD_NAMES it includes the header by its deprecated 0.2 name.
 */
#ifdef MPFIXTURE_OLD_NAMES
#include <mpfixture/cmocka.h>
#include <mpfixture/mpfixture_worker.h>
#else
#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>
#endif

static void a_tree_of_fake_chips_comes_up(void **state)
{
    (void)state;
    mpfw_tree *t = NULL;
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub,chip*2}", NULL), 0);
    assert_ptr_equal(mpfw_tree_find(t, "root"), mpfw_tree_root(t));
    assert_int_equal(worker_get_state(mpfw_tree_root(t)), WORKER_READY);
    assert_int_equal(mpfw_open_trees(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(a_tree_of_fake_chips_comes_up, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
