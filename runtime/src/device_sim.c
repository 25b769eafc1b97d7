/*
 * device_sim.c — simulated chips: device memory is a shm region, kernels
 * are C functions by id.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device.h"

typedef int (*kernel_fn)(worker__device *d, const uint64_t *a, unsigned n,
                         uint64_t *result, char *msg, size_t msg_size);

/* Element range check: [off, off + count) of 32-bit elements. */
static int span(const worker__device *d, uint64_t off, uint64_t count,
                char *msg, size_t msg_size)
{
    uint64_t elems = d->size / sizeof(uint32_t);

    if (off > elems || count > elems - off) {
        snprintf(msg, msg_size, "device memory access [%llu, +%llu) out of range "
                 "(%llu elements)", (unsigned long long)off,
                 (unsigned long long)count, (unsigned long long)elems);
        return -EIO;
    }
    return 0;
}

static int k_vector_add(worker__device *d, const uint64_t *a, unsigned n,
                        uint64_t *result, char *msg, size_t msg_size)
{
    uint32_t *m = d->mem;

    if (n < 4 || span(d, a[0], a[3], msg, msg_size) ||
        span(d, a[1], a[3], msg, msg_size) || span(d, a[2], a[3], msg, msg_size)) {
        if (n < 4)
            snprintf(msg, msg_size, "vector_add needs 4 arguments");
        return -EIO;
    }
    for (uint64_t i = 0; i < a[3]; i++)
        m[a[2] + i] = m[a[0] + i] + m[a[1] + i];
    *result = a[3];
    return 0;
}

static int k_fill(worker__device *d, const uint64_t *a, unsigned n,
                  uint64_t *result, char *msg, size_t msg_size)
{
    uint32_t *m = d->mem;

    if (n < 3 || span(d, a[0], a[1], msg, msg_size)) {
        if (n < 3)
            snprintf(msg, msg_size, "fill needs 3 arguments");
        return -EIO;
    }
    for (uint64_t i = 0; i < a[1]; i++)
        m[a[0] + i] = (uint32_t)a[2];
    *result = a[1];
    return 0;
}

static int k_checksum(worker__device *d, const uint64_t *a, unsigned n,
                      uint64_t *result, char *msg, size_t msg_size)
{
    const uint32_t *m = d->mem;
    uint64_t sum = 0;

    if (n < 2 || span(d, a[0], a[1], msg, msg_size)) {
        if (n < 2)
            snprintf(msg, msg_size, "checksum needs 2 arguments");
        return -EIO;
    }
    for (uint64_t i = 0; i < a[1]; i++)
        sum += m[a[0] + i];
    *result = sum;
    return 0;
}

static int k_sleep(worker__device *d, const uint64_t *a, unsigned n,
                   uint64_t *result, char *msg, size_t msg_size)
{
    struct timespec ts;

    (void)d; (void)msg; (void)msg_size;
    if (n < 1)
        return 0;
    /* The simulated device is busy for this long: a scripted duration. */
    ts.tv_sec = (time_t)(a[0] / 1000);
    ts.tv_nsec = (long)(a[0] % 1000) * 1000000;
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
    *result = 0;
    return 0;
}

static int k_fail(worker__device *d, const uint64_t *a, unsigned n,
                  uint64_t *result, char *msg, size_t msg_size)
{
    (void)a; (void)n; (void)result;
    snprintf(msg, msg_size, "kernel fail on device %u", d->id);
    return -EIO;
}

static int k_crash(worker__device *d, const uint64_t *a, unsigned n,
                   uint64_t *result, char *msg, size_t msg_size)
{
    int sig = n >= 1 && a[0] > 0 && a[0] < 65 ? (int)a[0] : SIGSEGV;
    struct sigaction sa;

    (void)d; (void)result; (void)msg; (void)msg_size;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    kill(getpid(), sig);
    return -EIO;
}

static const kernel_fn kernels[WORKER__K_COUNT] = {
    [WORKER__K_VECTOR_ADD] = k_vector_add,
    [WORKER__K_FILL] = k_fill,
    [WORKER__K_CHECKSUM] = k_checksum,
    [WORKER__K_SLEEP] = k_sleep,
    [WORKER__K_FAIL] = k_fail,
    [WORKER__K_CRASH] = k_crash,
};

int worker__device_open(worker__device *d, unsigned id, const char *name,
                        size_t size, unsigned depth, char *msg, size_t msg_size)
{
    int fd, rc;
    void *p;

    memset(d, 0, sizeof(*d));
    d->id = id;
    d->depth = depth;
    d->size = size;
    snprintf(d->name, sizeof(d->name), "%s", name);
    fd = shm_open(d->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
        snprintf(msg, msg_size, "device memory %s: %s", d->name, strerror(errno));
        d->name[0] = '\0';
        return rc;
    }
    rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc == 0) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            rc = errno;
        else
            d->mem = p;
    }
    close(fd);
    if (rc) {
        snprintf(msg, msg_size, "device memory %s: %s", d->name, strerror(rc));
        shm_unlink(d->name);
        d->name[0] = '\0';
        return -rc;
    }
    for (unsigned k = 1; k < WORKER__K_COUNT; k++)
        if (kernels[k])
            d->kernels_loaded |= 1u << k;
    return 0;
}

void worker__device_close(worker__device *d)
{
    if (d->mem)
        munmap(d->mem, d->size);
    d->mem = NULL;
    if (d->name[0])
        shm_unlink(d->name);
    d->name[0] = '\0';
}

int worker__device_run(worker__device *d, unsigned kid, const uint64_t *args,
                       unsigned nargs, uint64_t *result, char *msg,
                       size_t msg_size)
{
    uint64_t r = 0;
    int rc;

    if (kid >= WORKER__K_COUNT || !(d->kernels_loaded & (1u << kid))) {
        snprintf(msg, msg_size, "no kernel with id %u on device %u", kid, d->id);
        return -EIO;
    }
    rc = kernels[kid](d, args, nargs, &r, msg, msg_size);
    if (result)
        *result = r;
    return rc;
}
