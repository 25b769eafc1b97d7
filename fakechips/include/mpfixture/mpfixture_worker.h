/* SPDX-License-Identifier: MIT */
/* Deprecated name of <mpfixture/fakechips.h>, kept for 0.3 only: include that. */
#include <mpfixture/fakechips.h>
