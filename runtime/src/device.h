/*
 * device.h — the simulated device backend of chip children.
 *
 * A simulated device is what a chip child opens during its init: device
 * memory in a shared-memory region of its own ("<mailbox name>.dev", so a
 * leak of it is visible in /dev/shm and the parent can reclaim it by name
 * after a crash), a table of kernels (C functions by id), and a pipeline
 * depth that INIT_READY advertises.
 */
#ifndef WORKER_DEVICE_H
#define WORKER_DEVICE_H

#include <stddef.h>
#include <stdint.h>

enum worker__kernel_id {
    WORKER__K_VECTOR_ADD = 1, /* c[i] = a[i] + b[i]  (args: a, b, c, n; offsets) */
    WORKER__K_FILL = 2,       /* a[i] = v            (args: a, n, v) */
    WORKER__K_CHECKSUM = 3,   /* result = sum a[i]   (args: a, n) */
    WORKER__K_SLEEP = 4,      /* busy device for ms  (args: ms) */
    WORKER__K_FAIL = 5,       /* fails with a message */
    WORKER__K_CRASH = 6,      /* the device process dies (args: signal) */
    WORKER__K_COUNT
};

typedef struct worker__device {
    unsigned id;
    unsigned depth;
    size_t size;
    void *mem;
    char name[128];
    uint32_t kernels_loaded;  /* bit set of kernel ids */
} worker__device;

/* Open device `id`: create its memory region (O_CREAT|O_EXCL, 0600,
   posix_fallocate), load the kernels. 0 or negative errno with msg. */
int worker__device_open(worker__device *d, unsigned id, const char *name,
                        size_t size, unsigned depth, char *msg, size_t msg_size);

/* Unmap and unlink the device memory; safe on a closed device. */
void worker__device_close(worker__device *d);

/* Run kernel `kid` with up to 6 arguments (element offsets into device
   memory, counts, values). Returns 0 or -EIO with msg; *result gets the
   kernel's scalar result. */
int worker__device_run(worker__device *d, unsigned kid, const uint64_t *args,
                       unsigned nargs, uint64_t *result, char *msg,
                       size_t msg_size);

#endif /* WORKER_DEVICE_H */
