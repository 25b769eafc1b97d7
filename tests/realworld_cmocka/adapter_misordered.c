/* SPDX-License-Identifier: MIT */
/* A suite that uses the adapter, linked -lcmocka -lmpfixture (the wrong
   way round): it must refuse to run rather than guard blind. */
#include <mpfixture/cmocka.h>

static void passes(void **state)
{
    assert_null(*state); /* a call into libcmocka: it is needed first */
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(passes) };
    return mpf_run_group_tests(tests, NULL, NULL);
}
