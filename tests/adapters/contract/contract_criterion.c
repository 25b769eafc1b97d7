/* SPDX-License-Identifier: MIT */
/* contract_criterion.c — the contract's offence under the Criterion
   adapter. */
#include <mpfixture/criterion.h>

#include "offence.h"

MPF_TEST(contract, leaves_an_object)
{
    cr_assert_eq(contract_offence(), 0);
}
