/* SPDX-License-Identifier: MIT */
/*
 * guarded_suite.c — a Criterion suite written with MPF_TEST, the offences
 * planted. Run by check_criterion_run.py, which asserts Criterion's
 * verdict of each test and what its output says, and registered test by
 * test with mpf_add_criterion_test().
 *   suite leaks:   clean; a live child; a /dev/shm object; a zombie; a
 *                  failed assertion; clean again
 *   suite budget:  a test over its budget (300 ms), then one that must run
 *   suite outcome: a failed cr_expect (it continues), skips (in the body,
 *                  silent, in .init), an escaped fork, a failed assertion
 *                  that leaks too, declared persistent state
 *   suite newapi:  (guarded_suite_new_api.c) the new assertion API
 * Criterion runs a suite's tests in the order of their names: t1_, t2_...
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/criterion.h>

/* The planted object's name: the runner's pid in it (a worker's parent),
   so that the driver can check it is gone after the run. */
static void planted_shm_name(char *buf, size_t size)
{
    snprintf(buf, size, "/mpf_criterion_leak.%ld", (long)getppid());
}

/* A child that lives until it is killed. */
static pid_t fork_lingering_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

MPF_TEST(leaks, t1_clean_first)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status));
}

MPF_TEST(leaks, t2_leaves_live_child)
{
    cr_assert(fork_lingering_child() > 0);
}

MPF_TEST(leaks, t3_leaves_shm_object)
{
    char name[64];
    planted_shm_name(name, sizeof name);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    cr_assert(fd >= 0);
    close(fd);
}

MPF_TEST(leaks, t4_leaves_zombie)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0)
        _exit(0);
    /* Until it has exited, without reaping it. */
    siginfo_t info;
    cr_assert_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
}

MPF_TEST(leaks, t5_fails_an_assertion)
{
    cr_assert(1 + 1 == 3, "the planted assertion");
}

MPF_TEST(leaks, t6_clean_again)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    close(fds[1]);
}

/* Over its budget of 300 ms: a child that never ends, waited for. The
   budget's signal kills the child, waitpid returns, the case ends. */
MPF_TEST_BUDGET(300, budget, t1_over_budget)
{
    pid_t pid = fork_lingering_child();
    cr_assert(pid > 0);
    int status = 0;
    (void)waitpid(pid, &status, 0);
}

MPF_TEST(budget, t2_next_runs)
{
    cr_assert(1);
}

MPF_TEST(outcome, expect_fails_and_continues)
{
    cr_expect(0, "the planted expectation");
    cr_expect(0, "a second one: the first is the outcome");
}

MPF_TEST(outcome, skips)
{
    cr_skip("the planted skip");
}

MPF_TEST(outcome, skips_silently)
{
    cr_skip();
}

static void skip_in_init(void)
{
    cr_skip("skipped by .init, before the guarded body");
}

MPF_TEST(outcome, skips_in_init, .init = skip_in_init)
{
    cr_assert_fail("never reached");
}

/* The test's own failure and a leak: both are reported. */
MPF_TEST(outcome, fails_and_leaks)
{
    cr_assert(fork_lingering_child() > 0);
    cr_assert(0, "the planted assertion beside a leak");
}

/* Declared persistent state: kept at case end, named on stderr, no
   failure. .fini (after the case) removes it. */
static void kept_shm_name(char *buf, size_t size)
{
    snprintf(buf, size, "/mpf_criterion_kept.%ld", (long)getppid());
}

static void unlink_kept(void)
{
    char name[64];
    kept_shm_name(name, sizeof name);
    shm_unlink(name);
}

MPF_TEST(outcome, keeps_declared_state, .fini = unlink_kept)
{
    char name[64];
    kept_shm_name(name, sizeof name);
    cr_assert_eq(mpf_keep_shm("mpf_criterion_kept.*"), 0);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    cr_assert(fd >= 0);
    close(fd);
}

/* A forked child that returns from the body into the adapter's frames:
   stopped by the guard there, named in the report. */
MPF_TEST(outcome, escaped_fork)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0)
        return;
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) &&
              WEXITSTATUS(status) == MPF_ESCAPED_EXIT_STATUS);
}
