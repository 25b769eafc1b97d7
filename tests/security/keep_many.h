/* SPDX-License-Identifier: MIT */
/*
 * keep_many.h — with MPF_TEST_KEEP_MANY=N, a subject of
 * test_runner_killed.c makes, before anything else, one object the keep
 * list declares persistent ("mpf-killed-kept-<pid>", kept by
 * MPF_KEEP_SHM=mpf-killed-kept-*) and then N more ("mpf-killed-<pid>-m<i>"):
 * with N above the named slots (256), the kept one is found again by its
 * identity alone, and every path that removes a killed case's objects must
 * leave it. Without the variable, nothing.
 */
#ifndef MPF_TEST_KEEP_MANY_H
#define MPF_TEST_KEEP_MANY_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* 0, or -1 (with a message) if an object could not be made. */
static inline int make_kept_and_many(void)
{
    const char *v = getenv("MPF_TEST_KEEP_MANY");
    int n = v ? atoi(v) : 0;
    for (int i = -1; v && i < n; i++) {
        char name[64];
        if (i < 0)
            snprintf(name, sizeof name, "/mpf-killed-kept-%d", (int)getpid());
        else
            snprintf(name, sizeof name, "/mpf-killed-%d-m%d", (int)getpid(), i);
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0)
            return perror(name), -1;
        close(fd);
    }
    return 0;
}

#endif
