/* SPDX-License-Identifier: MIT */
/* contract_cmocka.c — the contract's deed under the cmocka adapter, and
   (built with CONTRACT_DROPIN) under the cmocka drop-in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <mpfixture/mpfixture.h>

#include "offence.h"

static void leaves_an_object(void **state)
{
    (void)state;
    assert_int_equal(contract_offence(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(leaves_an_object) };
#ifdef CONTRACT_DROPIN /* guarded by the drop-in, with no change */
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    return mpf_run_group_tests(tests, NULL, NULL);
#endif
}
