/* SPDX-License-Identifier: MIT */
/*
 * test_caller_children.c — the supervisor kills what a dead or finished
 * runner left, never the caller's own children: main() forks a child
 * before mpf_run_group_tests(), runs a case (in a runner, supervised),
 * and then the child must still be alive. It is ended with SIGTERM: had
 * the supervisor SIGKILLed it, SIGKILL would be its cause of death.
 * Exit status 0 when the child was spared and the case passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

static void clean_case_passes(void **state)
{
    (void)state;
}

int main(void)
{
    pid_t mine = fork();
    if (mine == 0) {
        sigset_t none;
        sigemptyset(&none);
        (void)signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (;;)
            pause();
    }
    if (mine < 0) {
        perror("fork");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        mpf_unit_test(clean_case_passes, 5000),
    };
    int failed = mpf_run_group_tests(tests, NULL, NULL);
    int st = 0;
    kill(mine, SIGTERM);
    if (waitpid(mine, &st, 0) != mine || !WIFSIGNALED(st) ||
        WTERMSIG(st) != SIGTERM) {
        fprintf(stderr,
                "test_caller_children: the caller's child (pid %d) was "
                "killed by the fixture (status %#x)\n",
                (int)mine, st);
        return 1;
    }
    printf("the caller's child was spared\n");
    return failed ? 1 : 0;
}
