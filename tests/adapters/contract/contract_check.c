/* SPDX-License-Identifier: MIT */
/* contract_check.c — the contract's offence under the Check adapter. */
#include <stdlib.h>

#include <mpfixture/check.h>

#include "offence.h"

START_TEST(leaves_an_object)
{
    ck_assert_int_eq(contract_offence(), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("contract");
    TCase *tc = tcase_create("Contract");
    tcase_add_test(tc, leaves_an_object);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    int failed = mpf_srunner_run_all(sr, CK_NORMAL);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
