/* SPDX-License-Identifier: MIT */
/*
 * counter.c — see counter.h.
 */
#define _GNU_SOURCE
#include "counter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

long counter_run(const char *name, int workers, int adds)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return -errno;
    if (ftruncate(fd, sizeof(atomic_long)) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return -e;
    }
    atomic_long *total = mmap(NULL, sizeof *total, PROT_READ | PROT_WRITE,
                              MAP_SHARED, fd, 0);
    close(fd);
    if (total == MAP_FAILED)
        return -errno;

    int started = 0;
    for (; started < workers; started++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            for (int i = 0; i < adds; i++)
                atomic_fetch_add(total, 1);
            _exit(0);
        }
    }
    for (int i = 0; i < started; i++) {
        while (wait(NULL) < 0 && errno == EINTR) {
        }
    }
    long result = started == workers ? atomic_load(total) : -EAGAIN;
    munmap(total, sizeof *total);
    return result;
}

int counter_remove(const char *name)
{
    return shm_unlink(name) == 0 ? 0 : -errno;
}
