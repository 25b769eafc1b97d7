/* SPDX-License-Identifier: MIT */
/*
 * guarded_suite_new_api.c — MPF_TEST with Criterion's new assertion API
 * (<criterion/new/assert.h>, which reports through cri_assert_node_send):
 * the test's own failure and its message reach the audit.
 */
#include <mpfixture/criterion.h>
/* After <criterion/criterion.h>: it replaces the old API's macros. */
#include <criterion/new/assert.h>

MPF_TEST(newapi, expect_fails)
{
    cr_expect(eq(int, 1 + 1, 3), "the planted new-API expectation");
}

MPF_TEST(newapi, assert_fails_silently)
{
    cr_assert(eq(int, 2 + 2, 5));
}
