/* SPDX-License-Identifier: MIT */
/*
 * plain_tree_subject.c — a plain program (no cmocka, no header of ours)
 * that test_runner_killed.c runs under mpf-run and then kills mpf-run or
 * its guard: it makes one shm object, a child that waits, and a daemon
 * (fork, setsid, fork, the middle one exits: the daemon is an orphan,
 * re-parented to mpf-run's guard), then says so on descriptor 9
 * ("<self> <child> <daemon> <name>\n") and waits to be killed.
 * MPF_TEST_KEEP_MANY: keep_many.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keep_many.h"

#define READY_FD 9

static void wait_forever(void)
{
    for (;;)
        pause();
}

int main(void)
{
    if (make_kept_and_many() != 0)
        return 1;
    char name[64];
    snprintf(name, sizeof name, "/mpf-plain-tree-%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return perror("shm_open"), 1;
    close(fd);
    pid_t child = fork();
    if (child < 0)
        return perror("fork"), 1;
    if (child == 0)
        wait_forever();
    int p[2];
    if (pipe(p) != 0)
        return perror("pipe"), 1;
    pid_t middle = fork();
    if (middle < 0)
        return perror("fork"), 1;
    if (middle == 0) {
        setsid();
        pid_t daemon = fork();
        if (daemon == 0)
            wait_forever();
        _exit(write(p[1], &daemon, sizeof daemon) == sizeof daemon ? 0 : 1);
    }
    pid_t daemon = 0;
    int status = 0;
    if (read(p[0], &daemon, sizeof daemon) != sizeof daemon || daemon <= 0 ||
        waitpid(middle, &status, 0) != middle || status != 0)
        return fputs("the daemon was not started\n", stderr), 1;
    char line[160];
    int len = snprintf(line, sizeof line, "%d %d %d %s\n", (int)getpid(),
                       (int)child, (int)daemon, name + 1);
    if (write(READY_FD, line, (size_t)len) != len)
        return perror("write"), 1;
    wait_forever();
}
