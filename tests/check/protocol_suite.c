/* SPDX-License-Identifier: MIT */
/*
 * protocol_suite.c — a Check suite run by mpf_srunner_run_all() under
 * Bazel's test protocol, its variables set by check_bazel_run.py (no
 * Bazel needed). Its runs are told apart by what they print: "ran NAME"
 * on stdout (Check's own output goes to stderr: CK_VERBOSITY=silent).
 *   TCase Plain:  four clean tests, one of them leaving a /dev/shm object
 *                 when PROTOCOL_SUITE_LEAK is set
 *   TCase Loop:   a loop test of three iterations (three runs)
 *   TCase Setup:  a checked setup that fails: its test never starts
 *   TCase Runner: checks that TEST_PREMATURE_EXIT_FILE exists while it
 *                 runs; with PROTOCOL_SUITE_KILL_RUNNER set, SIGKILLs
 *                 the runner (in fork mode Check's parent, else itself)
 * The planted object is /mpf_check_leak.<pid>: the driver checks that
 * none is left.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpfixture/check.h>

static void ran(const char *name)
{
    printf("ran %s\n", name);
    fflush(stdout);
}

START_TEST(plain_one)
{
    ran("plain_one");
}
END_TEST

START_TEST(plain_two)
{
    ran("plain_two");
}
END_TEST

START_TEST(leaks_when_asked)
{
    ran("leaks_when_asked");
    if (!getenv("PROTOCOL_SUITE_LEAK"))
        return;
    char name[64];
    snprintf(name, sizeof name, "/mpf_check_leak.%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST

START_TEST(plain_four)
{
    ran("plain_four");
}
END_TEST

START_TEST(loops)
{
    ran("loops");
}
END_TEST

static void failing_setup(void)
{
    ck_abort_msg("the planted setup failure");
}

START_TEST(after_a_failed_setup)
{
    ran("after_a_failed_setup");
}
END_TEST

START_TEST(sees_the_premature_exit_file)
{
    ran("sees_the_premature_exit_file");
    const char *path = getenv("TEST_PREMATURE_EXIT_FILE");
    ck_assert_msg(!path || access(path, F_OK) == 0,
                  "TEST_PREMATURE_EXIT_FILE is not there while a test runs");
    const char *fork_status = getenv("CK_FORK");
    bool no_fork = fork_status && strcmp(fork_status, "no") == 0;
    if (getenv("PROTOCOL_SUITE_KILL_RUNNER"))
        kill(no_fork ? getpid() : getppid(), SIGKILL);
}
END_TEST

static Suite *protocol_suite(void)
{
    Suite *s = suite_create("protocol");
    TCase *plain = tcase_create("Plain");
    tcase_add_test(plain, plain_one);
    tcase_add_test(plain, plain_two);
    tcase_add_test(plain, leaks_when_asked);
    tcase_add_test(plain, plain_four);
    suite_add_tcase(s, plain);
    TCase *loop = tcase_create("Loop");
    tcase_add_loop_test(loop, loops, 0, 3);
    suite_add_tcase(s, loop);
    TCase *setup = tcase_create("Setup");
    tcase_add_checked_fixture(setup, failing_setup, NULL);
    tcase_add_test(setup, after_a_failed_setup);
    suite_add_tcase(s, setup);
    TCase *runner = tcase_create("Runner");
    tcase_add_test(runner, sees_the_premature_exit_file);
    suite_add_tcase(s, runner);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(protocol_suite());
    int failed = mpf_srunner_run_all(sr, CK_ENV);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
