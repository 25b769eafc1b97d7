/* SPDX-License-Identifier: MIT */
/*
 * bazel_suite.c — the tests check_criterion_bazel.py needs beside the
 * guarded suite's, for Bazel's test protocol and Criterion's .timeout:
 *   suite bazel:   the premature-exit file seen from a running test; a
 *                  plain Test (not MPF_TEST) the protocol must shard and
 *                  report too; a test that kills the runner when asked
 *   suite timeout: a test whose .timeout (1 s) is below the guard's
 *                  budget (10 s): the guard fires first, with forensics
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/criterion.h>

/* While a run under bazel test is going on, its premature-exit file is
   there (adapters/adapter.h); outside one there is nothing to see. */
MPF_TEST(bazel, premature_file_exists_while_running)
{
    const char *path = getenv("TEST_PREMATURE_EXIT_FILE");
    if (path && *path)
        cr_assert(access(path, F_OK) == 0,
                  "TEST_PREMATURE_EXIT_FILE is absent while the run goes on");
}

/* A test of the program that the guard does not wrap. */
Test(bazel, plain_test_is_sharded_too)
{
    cr_assert(1);
}

/* The runner dies mid-run when asked (the worker follows it: BoxFort gives
   it PR_SET_PDEATHSIG): its premature-exit file is left behind, and so is
   its message server's socket file, which the check removes by the pid
   said here. */
MPF_TEST(bazel, runner_dies_when_asked)
{
    if (getenv("CRITERION_BAZEL_KILL_RUNNER")) {
        printf("killing the runner, pid %d\n", (int)getppid());
        fflush(stdout);
        kill(getppid(), SIGKILL);
    }
}

/* .timeout = 1 s, the guard's budget the default 10 s: capped below the
   timeout, the budget's signal kills the child, the wait returns and the
   case ends with the guard's forensics before Criterion's runner kills the
   worker. */
MPF_TEST(timeout, caps_the_budget, .timeout = 1)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    cr_assert(pid > 0);
    int status = 0;
    (void)waitpid(pid, &status, 0);
}
