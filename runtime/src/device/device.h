/* SPDX-License-Identifier: MIT */
/*
 * device.h — the simulated device backend of chip children.
 *
 * A simulated device is what a chip child opens during its init: base
 * device memory in a shared-memory region of its own ("<mailbox name>.dev",
 * so a leak of it is visible in /dev/shm and the parent can reclaim it by
 * name after a crash), a table of kernels (C functions by id, loaded before
 * INIT_READY), and a pipeline depth that INIT_READY advertises.
 *
 * Device memory is a set of regions addressed by worker_devptr (region id
 * << 32 | byte offset): region 0 is the base memory, regions 1.. are
 * allocations made on the parent's request (control DEV_ALLOC), each its
 * own shm object "<base name>.<id>" created O_CREAT|O_EXCL, 0600 and
 * reserved with posix_fallocate. Kernels see 32-bit elements.
 */
#ifndef WORKER_DEVICE_H
#define WORKER_DEVICE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpfixture/worker.h"

#define WORKER__K_COUNT 8 /* kernel ids are worker_kernel, 1..7 */
#define WORKER__DEV_REGIONS_MAX 1024

struct worker__dev_region {
    uint32_t id;
    size_t size;
    void *mem;
    char name[160];
};

typedef struct worker__device {
    unsigned id;
    unsigned depth;
    size_t size;
    void *mem;
    char name[128];
    uint32_t kernels_loaded; /* bit set of kernel ids */
    /* Allocated regions (ids 1..), in a malloc'd array. */
    struct worker__dev_region *regions;
    unsigned n_regions, cap_regions;
    uint32_t next_region;
    /* The sleep kernel waits on wake_word and ends early once *stop_word
       or *gone_flag is set (the mailbox bell, the sticky shutdown word,
       and the parent-death flag the SIGHUP handler sets and rings the
       bell for); each may be NULL. */
    _Atomic uint32_t *wake_word;
    const _Atomic uint32_t *stop_word;
    const volatile sig_atomic_t *gone_flag;
} worker__device;

/* Open device `id`: create its base memory (O_CREAT|O_EXCL, 0600,
   posix_fallocate), load the kernels. 0 or negative errno with msg. */
int worker__device_open(worker__device *d, unsigned id, const char *name,
                        size_t size, unsigned depth, char *msg,
                        size_t msg_size);

/* Unmap everything; unlink the base memory, and the allocated regions
   unless keep_regions (they are then the caller's leak, left for a leak
   checker). Safe on a closed device. */
void worker__device_close(worker__device *d, bool keep_regions);

/* Allocate a region of `size` bytes (1..WORKER_DEVICE_ALLOC_MAX): *id gets
   its region id. 0 or negative errno with msg. */
int worker__device_alloc(worker__device *d, size_t size, uint32_t *id,
                         char *msg, size_t msg_size);
/* Unmap and unlink region `id`. 0 or -ENOENT with msg. */
int worker__device_free(worker__device *d, uint32_t id, char *msg,
                        size_t msg_size);

/* Run kernel `kid` with up to WORKER_KERNEL_ARGS_MAX arguments (device
   pointers, counts, values). Returns 0 or -EIO with msg; *result gets the
   kernel's scalar result. */
int worker__device_run(worker__device *d, unsigned kid, const uint64_t *args,
                       unsigned nargs, uint64_t *result, char *msg,
                       size_t msg_size);

#endif /* WORKER_DEVICE_H */
