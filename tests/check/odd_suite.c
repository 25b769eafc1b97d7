/* SPDX-License-Identifier: MIT */
/*
 * odd_suite.c — a Check suite run by mpf_srunner_run_all() with what a
 * project rarely writes but the adapter must still judge, fail closed.
 * Run by check_check_run.py (see CMakeLists.txt):
 *   TCase Setup:    a checked setup that fails: Check's setup failure,
 *                   no case begun
 *   TCase HandWritten: a failed assertion, then a test written by hand
 *                   (a TTest, no START_TEST): Check's runner starts it
 *                   all the same, it is guarded and passes
 *   TCase Ends:     a test that ends the guard's case itself: it fails,
 *                   the adapter cannot end the case
 *   TCase Expected: a test that declares the /dev/shm object it leaves
 *                   (mpf_expect): it passes, the guard's report on stderr
 *   TCase Refused:  tcase_set_timeout() with a negative timeout, which
 *                   Check ignores: the TCase keeps its default (--list)
 *   TCase FailsTwice: a failed assertion, then a failed checked teardown
 *   TCase Huge:     a timeout of 5e6 s: a budget of UINT32_MAX ms (--list)
 *   TCase Many:     one test added 17 times: 17 runs, 17 records (--list)
 * main() first checks that a NULL runner is refused (-1); with
 * --unguarded it runs the suite by Check's own srunner_run_all(), which
 * the wrappers leave alone.
 * The planted object is /mpf_check_leak.<pid>: the driver checks that
 * none is left.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpfixture/check.h>

static void failing_setup(void)
{
    ck_abort_msg("the planted setup failure");
}

START_TEST(after_a_failed_setup)
{
    ck_assert_int_eq(1, 1);
}
END_TEST

START_TEST(fails_before_hand_written)
{
    ck_abort_msg("the planted failure");
}
END_TEST

/* A test without START_TEST: Check's runner calls tcase_fn_start. */
static void hand_written_fn(int i)
{
    (void)i;
}
static const TTest hand_written_test = { "hand_written", hand_written_fn,
                                         __FILE__, __LINE__ };

START_TEST(ends_its_own_case)
{
    mpf_case_end(NULL);
}
END_TEST

START_TEST(expected_shm_object)
{
    char name[64];
    snprintf(name, sizeof name, "/mpf_check_leak.%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    mpf_expect(MPF_SHM_LEAK, name + 1);
}
END_TEST

START_TEST(keeps_the_default_timeout)
{
    ck_assert_int_eq(2, 2);
}
END_TEST

static void failing_teardown(void)
{
    ck_abort_msg("the planted teardown failure");
}

START_TEST(fails_then_its_teardown)
{
    ck_abort_msg("the planted failure");
}
END_TEST

START_TEST(huge_timeout)
{
    ck_assert_int_eq(4, 4);
}
END_TEST

START_TEST(repeated)
{
    ck_assert_int_eq(3, 3);
}
END_TEST

/* More tests and TCases than the adapter's first records hold (16). */
#define MANY 17

static Suite *odd_suite(void)
{
    Suite *s = suite_create("odd");
    TCase *setup = tcase_create("Setup");
    tcase_add_checked_fixture(setup, failing_setup, NULL);
    tcase_add_test(setup, after_a_failed_setup);
    suite_add_tcase(s, setup);
    TCase *hand = tcase_create("HandWritten");
    tcase_add_test(hand, fails_before_hand_written);
    tcase_add_test(hand, &hand_written_test);
    suite_add_tcase(s, hand);
    TCase *ends = tcase_create("Ends");
    tcase_add_test(ends, ends_its_own_case);
    suite_add_tcase(s, ends);
    TCase *expected = tcase_create("Expected");
    tcase_add_test(expected, expected_shm_object);
    suite_add_tcase(s, expected);
    TCase *refused = tcase_create("Refused");
    tcase_set_timeout(refused, -1);
    tcase_add_test(refused, keeps_the_default_timeout);
    suite_add_tcase(s, refused);
    TCase *twice = tcase_create("FailsTwice");
    tcase_add_checked_fixture(twice, NULL, failing_teardown);
    tcase_add_test(twice, fails_then_its_teardown);
    suite_add_tcase(s, twice);
    TCase *huge = tcase_create("Huge");
    tcase_set_timeout(huge, 5e6);
    tcase_add_test(huge, huge_timeout);
    suite_add_tcase(s, huge);
    TCase *many = tcase_create("Many");
    for (int i = 0; i < MANY; i++)
        tcase_add_test(many, repeated);
    suite_add_tcase(s, many);
    for (int i = 0; i < MANY; i++)
        suite_add_tcase(s, tcase_create("Empty"));
    return s;
}

int main(int argc, char **argv)
{
    if (mpf_srunner_run_all(NULL, CK_ENV) != -1) {
        fprintf(stderr, "odd_suite: a NULL runner was not refused\n");
        return 2;
    }
    SRunner *sr = srunner_create(odd_suite());
    int failed;
    if (argc > 1 && strcmp(argv[1], "--unguarded") == 0) {
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
    } else {
        failed = mpf_srunner_run_all(sr, CK_ENV);
    }
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
