/* SPDX-License-Identifier: MIT */
/*
 * guarded_suite.c — a Check suite run by mpf_srunner_run_all(), the way a
 * project writes one, with the offences planted. Run by
 * check_check_run.py in fork mode and in no-fork mode (CK_FORK=no), which
 * asserts Check's verdict of each test and what its output says.
 *   TCase Leaks:  clean; a live child; a /dev/shm object; a zombie; a
 *                 failed assertion; clean again
 *   TCase Budget: a test over its budget (the TCase's timeout, 0.3 s),
 *                 then one that must still run
 *   TCase Mixed:  a test that leaves a live child and then fails
 *   TCase Teardown, then After: a user's checked teardown that fails,
 *                 then a test that must still run
 * The planted processes are named mpfck_planted, the planted object
 * /mpf_check_leak.<pid>: the driver checks that none is left.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/check.h>

/* A child that lives until it is killed, returned once it is named
   (a byte on a pipe says so). */
static pid_t fork_lingering_child(void)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        prctl(PR_SET_NAME, "mpfck_planted");
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        close(ready[1]);
        for (;;)
            pause();
    }
    close(ready[1]);
    char byte;
    ssize_t got = pid > 0 ? read(ready[0], &byte, 1) : -1;
    close(ready[0]);
    return got == 1 ? pid : -1;
}

START_TEST(clean_first)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(0);
    int status = 0;
    ck_assert_int_eq(pid, waitpid(pid, &status, 0));
    ck_assert(WIFEXITED(status));
}
END_TEST

START_TEST(leaves_live_child)
{
    ck_assert_int_gt(fork_lingering_child(), 0);
}
END_TEST

START_TEST(leaves_shm_object)
{
    char name[64];
    snprintf(name, sizeof name, "/mpf_check_leak.%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST

START_TEST(leaves_zombie)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_NAME, "mpfck_planted");
        _exit(0);
    }
    /* Until it has exited, without reaping it. */
    siginfo_t info;
    ck_assert_int_eq(0, waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT));
}
END_TEST

START_TEST(fails_an_assertion)
{
    ck_assert_msg(1 + 1 == 3, "the planted assertion");
}
END_TEST

START_TEST(clean_again)
{
    ck_assert_int_eq(2, 1 + 1);
}
END_TEST

START_TEST(over_budget)
{
    pid_t child = fork_lingering_child();
    ck_assert_int_gt(child, 0);
    /* The budget signal ends the wait (no SA_RESTART) and kills the
       child; the guard reports the overrun with its forensics. */
    for (int i = 0; i < 600 && !mpf_budget_expired(); i++)
        pause();
    waitpid(child, NULL, 0);
}
END_TEST

START_TEST(next_runs)
{
    ck_assert_int_eq(4, 2 + 2);
}
END_TEST

START_TEST(leaks_and_fails)
{
    ck_assert_int_gt(fork_lingering_child(), 0);
    ck_assert(1 + 1 == 3);
}
END_TEST

/* A user's checked teardown that fails: Check skips the teardowns after
   it in no-fork mode, the guard's among them. */
static void failing_teardown(void)
{
    ck_assert_msg(0, "the planted teardown failure");
}

START_TEST(teardown_fails_after_it)
{
    ck_assert_int_eq(6, 2 * 3);
}
END_TEST

START_TEST(runs_after_a_failed_teardown)
{
    ck_assert_int_eq(9, 3 * 3);
}
END_TEST

static Suite *guarded_suite(void)
{
    Suite *s = suite_create("guarded");
    TCase *leaks = tcase_create("Leaks");
    tcase_add_test(leaks, clean_first);
    tcase_add_test(leaks, leaves_live_child);
    tcase_add_test(leaks, leaves_shm_object);
    tcase_add_test(leaks, leaves_zombie);
    tcase_add_test(leaks, fails_an_assertion);
    tcase_add_test(leaks, clean_again);
    suite_add_tcase(s, leaks);
    TCase *budget = tcase_create("Budget");
    tcase_set_timeout(budget, 0.3);
    tcase_add_test(budget, over_budget);
    tcase_add_test(budget, next_runs);
    suite_add_tcase(s, budget);
    TCase *teardown = tcase_create("Teardown");
    tcase_add_checked_fixture(teardown, NULL, failing_teardown);
    tcase_add_test(teardown, teardown_fails_after_it);
    suite_add_tcase(s, teardown);
    TCase *mixed = tcase_create("Mixed");
    tcase_add_test(mixed, leaks_and_fails);
    suite_add_tcase(s, mixed);
    TCase *after = tcase_create("After");
    tcase_add_test(after, runs_after_a_failed_teardown);
    suite_add_tcase(s, after);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(guarded_suite());
    int failed = mpf_srunner_run_all(sr, CK_ENV);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
