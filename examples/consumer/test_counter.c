/* SPDX-License-Identifier: MIT */
/*
 * test_counter.c — the counter's cmocka suite, guarded by mpfixture: one
 * clean case, and one that leaves its shm object on purpose and says so.
 */
#include <stdio.h>
#include <unistd.h>

#include <mpfixture/cmocka.h>

#include "counter.h"

static void name_for(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "/consumer-%s-%ld", what, (long)getpid());
}

static void workers_add_up(void **state)
{
    (void)state;
    char name[64];
    name_for(name, sizeof name, "clean");
    assert_int_equal(counter_run(name, 4, 1000), 4000);
    assert_int_equal(counter_remove(name), 0);
}

/* A must-fail case: it forgets counter_remove(). The guard reports the
   object by name and unlinks it; mpf_expect() makes that the pass. */
static void forgotten_object_is_reported(void **state)
{
    (void)state;
    char name[64];
    name_for(name, sizeof name, "leak");
    mpf_expect(MPF_SHM_LEAK, name + 1);
    assert_int_equal(counter_run(name, 2, 10), 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(workers_add_up, 2000),
        mpf_unit_test(forgotten_object_is_reported, 2000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
