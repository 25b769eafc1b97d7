/* SPDX-License-Identifier: MIT */
/*
 * die_after_create.c — a fault point in the create-then-record window.
 * Preloaded after libmpfixture (LD_PRELOAD="libmpfixture.so
 * libdie_after_create.so"), it is the next shm_open() libmpfixture's
 * wrapper calls: it calls libc's, and if that created an object whose name
 * holds MPF_TEST_DIE_AFTER_CREATING, kills its own process with SIGKILL
 * before returning — after the kernel made the object, before the ledger
 * could record it. Deterministic: no timing, no retries.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

int shm_open(const char *name, int oflag, mode_t mode)
{
    int (*real)(const char *, int,
                mode_t) = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT,
                                                                    "shm_open");
    if (!real)
        abort();
    int fd = real(name, oflag, mode);
    const char *die = getenv("MPF_TEST_DIE_AFTER_CREATING");
    if (fd >= 0 && (oflag & O_CREAT) && die && *die && strstr(name, die))
        kill(getpid(), SIGKILL);
    return fd;
}
