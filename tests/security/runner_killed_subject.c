/* SPDX-License-Identifier: MIT */
/*
 * runner_killed_subject.c — a guarded suite whose first case is killed
 * from outside (test_runner_killed.c drives it): the case creates two shm
 * objects and a child, says so on the descriptor MPF_TEST_READY_FD names
 * ("<runner> <child> <name> <name>\n"), then waits to be killed. The
 * second case passes. MPF_TEST_BLOCK_ORPHAN_SIGNAL: the case blocks the
 * runner's parent-death signal first. MPF_TEST_KEEP_MANY: keep_many.h.
 * MPF_TEST_WINDOW: the case dies inside the create-then-record window
 * (test_runner_killed window).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

#include "keep_many.h"

static void case_makes_objects_and_a_child_then_waits(void **state)
{
    (void)state;
    const char *fdtext = getenv("MPF_TEST_READY_FD");
    if (!fdtext) {
        fail_msg("MPF_TEST_READY_FD is not set");
        return;
    }
    assert_int_equal(make_kept_and_many(), 0);
    /* MPF_TEST_WINDOW: an object made by a raw system call (no record),
       then one whose creator dies before its record (die_after_create.c
       kills this process inside shm_open). */
    if (getenv("MPF_TEST_WINDOW")) {
        char raw[64];
        snprintf(raw, sizeof raw, "/dev/shm/mpf-raw-%d", (int)getpid());
        long fd = syscall(SYS_openat, AT_FDCWD, raw,
                          O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close((int)fd);
        snprintf(raw, sizeof raw, "/mpf-window-%d", (int)getpid());
        (void)shm_open(raw, O_CREAT | O_EXCL | O_RDWR, 0600);
        fail_msg("still alive after creating %s", raw);
    }
    char names[2][64];
    for (int i = 0; i < 2; i++) {
        snprintf(names[i], sizeof names[i], "/mpf-killed-%d-%d", (int)getpid(),
                 i);
        int fd = shm_open(names[i], O_CREAT | O_EXCL | O_RDWR, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        for (;;)
            pause();
    /* A case that blocks the runner's parent-death signal (supervisor.c):
       the runner outlives its supervisor until someone ends it. */
    if (getenv("MPF_TEST_BLOCK_ORPHAN_SIGNAL")) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGRTMAX - 1);
        assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    }
    char line[256];
    int len = snprintf(line, sizeof line, "%d %d %s %s\n", (int)getpid(),
                       (int)child, names[0] + 1, names[1] + 1);
    assert_int_equal(write(atoi(fdtext), line, (size_t)len), len);
    for (;;)
        pause();
}

static void case_after_passes(void **state)
{
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(case_makes_objects_and_a_child_then_waits, 60000),
        mpf_unit_test(case_after_passes, 2000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
