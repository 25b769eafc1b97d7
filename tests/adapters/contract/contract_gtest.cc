// SPDX-License-Identifier: MIT
// contract_gtest.cc — the contract's offence under the GoogleTest adapter.
#include <mpfixture/gtest.h>

#include "offence.h"

TEST(Contract, LeavesAnObject)
{
    ASSERT_EQ(contract_offence(), 0);
}
