/* SPDX-License-Identifier: MIT */
/*
 * test_handle_size.c — what a worker handle costs (issue 20): the handle
 * itself is bounded, and the children's records (the journal points into
 * them) are allocated to the tree's real size when it starts, not to
 * WORKER_MAX_CHILDREN. The handle was 471,312 bytes when it embedded 144
 * child records and a journal of 288 copies of them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"
#include "rt_helpers.h"

/* The handle without its children: options, callables (2 x 64 names),
   error texts, the two reports of rollback and close, locks, dispatch
   and device-memory heads. 16,384 bytes is its size now, rounded up to
   the next KiB: a field that grows it past that must say why. */
#define HANDLE_MAX_BYTES 16384u

static void handle_is_bounded_without_its_children(void **state)
{
    assert_true(sizeof(struct worker) <= HANDLE_MAX_BYTES);
    /* A child record is not embedded: only a pointer to the records. */
    assert_true(sizeof(struct worker) < sizeof(struct worker__child) * 16);
}

static void children_are_allocated_to_the_trees_size(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    assert_int_equal(mpfw_tree_spin_up(&t, "L4{L3{sub,chip*2},L3{sub}}", &o),
                     0);
    worker *root = mpfw_tree_root(t);
    /* The root's records are its two next-level children; each nested
       worker allocates its own inside its process, so the parent's copy
       of next.0 has none. */
    assert_int_equal(root->cap_children, 2);
    assert_int_equal(root->n_children, 2);
    assert_non_null(root->children);
    assert_non_null(root->journal);
    assert_null(mpfw_tree_find(t, "next.0")->children);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_journal_size(root), 0);
}

static void no_children_no_allocation(void **state)
{
    worker *w;
    worker_options o = WORKER_OPTIONS_INIT;

    o.level = 3;
    assert_int_equal(worker_new(&w, &o), 0);
    assert_null(w->children);
    assert_int_equal(worker_init(w), 0);
    assert_null(w->children);
    assert_int_equal(w->cap_children, 0);
    assert_int_equal(worker_close(w), 0);
    worker_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(handle_is_bounded_without_its_children, 2000),
        mpfw_unit_test(children_are_allocated_to_the_trees_size, 10000),
        mpf_unit_test(no_children_no_allocation, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
