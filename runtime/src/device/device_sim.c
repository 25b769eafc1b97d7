/* SPDX-License-Identifier: MIT */
/*
 * device_sim.c — simulated chips: device memory is a set of shm regions,
 * kernels are C functions by id.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "proc/proc.h"
#include "util.h"

typedef int (*kernel_fn)(worker__device *d, const uint64_t *a, unsigned n,
                         uint64_t *result, char *msg, size_t msg_size);

/* Resolve [p, p + count elements) to a host pointer, range-checked. */
static uint32_t *span(worker__device *d, uint64_t p, uint64_t count, char *msg,
                      size_t msg_size)
{
    uint32_t region = WORKER_DEVPTR_REGION(p);
    uint64_t off = WORKER_DEVPTR_OFFSET(p);
    size_t size = 0;
    uint8_t *base = NULL;

    if (region == 0) {
        base = d->mem;
        size = d->size;
    } else {
        for (unsigned i = 0; i < d->n_regions; i++)
            if (d->regions[i].id == region) {
                base = d->regions[i].mem;
                size = d->regions[i].size;
            }
        if (!base) {
            snprintf(msg, msg_size, "device memory region %u is not allocated",
                     region);
            return NULL;
        }
    }
    if (off % sizeof(uint32_t) || off > size ||
        count > (size - off) / sizeof(uint32_t)) {
        snprintf(msg, msg_size,
                 "device memory access [region %u + %llu, %llu "
                 "elements) out of range (%zu bytes)",
                 region, (unsigned long long)off, (unsigned long long)count,
                 size);
        return NULL;
    }
    return (uint32_t *)(void *)(base + off);
}

static int need(unsigned n, unsigned want, const char *kernel, char *msg,
                size_t msg_size)
{
    if (n >= want)
        return 0;
    snprintf(msg, msg_size, "%s needs %u arguments (got %u)", kernel, want, n);
    return -EIO;
}

static int k_vector_add(worker__device *d, const uint64_t *a, unsigned n,
                        uint64_t *result, char *msg, size_t msg_size)
{
    uint32_t *x, *y, *z;

    if (need(n, 4, "vector_add", msg, msg_size) ||
        !(x = span(d, a[0], a[3], msg, msg_size)) ||
        !(y = span(d, a[1], a[3], msg, msg_size)) ||
        !(z = span(d, a[2], a[3], msg, msg_size)))
        return -EIO;
    for (uint64_t i = 0; i < a[3]; i++)
        z[i] = x[i] + y[i];
    *result = a[3];
    return 0;
}

static int k_fill(worker__device *d, const uint64_t *a, unsigned n,
                  uint64_t *result, char *msg, size_t msg_size)
{
    uint32_t *x;

    if (need(n, 3, "fill", msg, msg_size) ||
        !(x = span(d, a[0], a[1], msg, msg_size)))
        return -EIO;
    for (uint64_t i = 0; i < a[1]; i++)
        x[i] = (uint32_t)a[2];
    *result = a[1];
    return 0;
}

static int k_checksum(worker__device *d, const uint64_t *a, unsigned n,
                      uint64_t *result, char *msg, size_t msg_size)
{
    const uint32_t *x;
    uint64_t sum = 0;

    if (need(n, 2, "checksum", msg, msg_size) ||
        !(x = span(d, a[0], a[1], msg, msg_size)))
        return -EIO;
    for (uint64_t i = 0; i < a[1]; i++)
        sum += x[i];
    *result = sum;
    return 0;
}

/* The device is busy for a[0] ms: a scripted duration, not a wait for a
   condition. It parks on the mailbox bell with an absolute deadline, so a
   SHUTDOWN (sticky word) ends it early instead of holding close(). */
static int k_sleep(worker__device *d, const uint64_t *a, unsigned n,
                   uint64_t *result, char *msg, size_t msg_size)
{
    int64_t deadline;

    *result = 0;
    if (n < 1 || a[0] == 0)
        return 0;
    if (a[0] > 3600000) {
        snprintf(msg, msg_size, "sleep of %llu ms is over an hour",
                 (unsigned long long)a[0]);
        return -EIO;
    }
    deadline = worker__now_ns() + (int64_t)a[0] * 1000000;
    for (;;) {
        uint32_t seq = d->wake_word ? atomic_load(d->wake_word) : 0;

        if (d->stop_word && worker__mb_load((_Atomic uint32_t *)d->stop_word)) {
            snprintf(msg, msg_size, "sleep interrupted by shutdown");
            return -EIO;
        }
        if (d->gone_flag && *d->gone_flag) {
            snprintf(msg, msg_size, "sleep interrupted: the parent is gone");
            return -EIO;
        }
        if (d->wake_word) {
            if (worker__futex_wait(d->wake_word, seq, deadline) == -ETIMEDOUT)
                return 0;
        } else {
            struct timespec ts = { (time_t)(deadline / 1000000000),
                                   (long)(deadline % 1000000000) };
            if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0)
                return 0;
        }
        if (worker__now_ns() >= deadline)
            return 0;
    }
}

static int k_fail(worker__device *d, const uint64_t *a, unsigned n,
                  uint64_t *result, char *msg, size_t msg_size)
{
    (void)a;
    (void)n;
    (void)result;
    snprintf(msg, msg_size, "kernel fail on device %u", d->id);
    return -EIO;
}

static int k_crash(worker__device *d, const uint64_t *a, unsigned n,
                   uint64_t *result, char *msg, size_t msg_size)
{
    int sig = n >= 1 && a[0] > 0 && a[0] < 65 ? (int)a[0] : SIGSEGV;
    struct rlimit rl = { 0, 0 };
    struct sigaction sa;
    sigset_t s;

    (void)d;
    (void)result;
    (void)msg;
    (void)msg_size;
    /* No core dump: with core_pattern "core" the dying chip would write
       its image first, and a crash test must see the death at once. */
    prctl(PR_SET_DUMPABLE, 0);
    setrlimit(RLIMIT_CORE, &rl);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    worker__coverage_flush();
    kill(getpid(), sig);
    /* A signal whose default is not fatal (SIGCHLD, SIGURG…): die anyway. */
    kill(getpid(), SIGKILL);
    return -EIO;
}

static int k_noop(worker__device *d, const uint64_t *a, unsigned n,
                  uint64_t *result, char *msg, size_t msg_size)
{
    (void)d;
    (void)a;
    (void)n;
    (void)msg;
    (void)msg_size;
    *result = 0;
    return 0;
}

static const kernel_fn kernels[WORKER__K_COUNT] = {
    [WORKER_KERNEL_VECTOR_ADD] = k_vector_add,
    [WORKER_KERNEL_FILL] = k_fill,
    [WORKER_KERNEL_CHECKSUM] = k_checksum,
    [WORKER_KERNEL_SLEEP] = k_sleep,
    [WORKER_KERNEL_FAIL] = k_fail,
    [WORKER_KERNEL_CRASH] = k_crash,
    [WORKER_KERNEL_NOOP] = k_noop,
};

/* Create, reserve and map a shm region. 0 or a positive errno. */
static int region_create(const char *name, size_t size, void **mem)
{
    int fd, rc;
    void *p;

    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    /* Reserve now: a full tmpfs fails here, not as a SIGBUS at first touch. */
    rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc == 0) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            rc = errno;
        else
            *mem = p;
    }
    close(fd);
    if (rc)
        shm_unlink(name);
    return rc;
}

int worker__device_open(worker__device *d, unsigned id, const char *name,
                        size_t size, unsigned depth, char *msg, size_t msg_size)
{
    int rc;

    memset(d, 0, sizeof(*d));
    d->id = id;
    d->depth = depth;
    d->size = size;
    d->next_region = 1;
    /* A copy without printf: this runs in a chip on its way to READY. */
    size_t len = strnlen(name, sizeof(d->name) - 1);
    memcpy(d->name, name, len);
    d->name[len] = '\0';
    rc = region_create(d->name, size, &d->mem);
    if (rc) {
        snprintf(msg, msg_size, "device memory %s: %s", d->name, strerror(rc));
        d->name[0] = '\0';
        return -rc;
    }
    for (unsigned k = 1; k < WORKER__K_COUNT; k++)
        if (kernels[k])
            d->kernels_loaded |= 1u << k;
    return 0;
}

void worker__device_close(worker__device *d, bool keep_regions)
{
    for (unsigned i = 0; i < d->n_regions; i++) {
        munmap(d->regions[i].mem, d->regions[i].size);
        if (!keep_regions)
            shm_unlink(d->regions[i].name);
    }
    free(d->regions);
    d->regions = NULL;
    d->n_regions = d->cap_regions = 0;
    if (d->mem)
        munmap(d->mem, d->size);
    d->mem = NULL;
    if (d->name[0])
        shm_unlink(d->name);
    d->name[0] = '\0';
}

int worker__device_alloc(worker__device *d, size_t size, uint32_t *id,
                         char *msg, size_t msg_size)
{
    struct worker__dev_region *r;
    int rc;

    if (size == 0 || size > WORKER_DEVICE_ALLOC_MAX) {
        snprintf(msg, msg_size, "allocation of %zu bytes (must be 1..%u)", size,
                 WORKER_DEVICE_ALLOC_MAX);
        return -EINVAL;
    }
    if (d->n_regions == WORKER__DEV_REGIONS_MAX) {
        snprintf(msg, msg_size, "at most %d live allocations per device",
                 WORKER__DEV_REGIONS_MAX);
        return -ENOSPC;
    }
    if (d->n_regions == d->cap_regions) {
        unsigned cap = d->cap_regions ? 2 * d->cap_regions : 8;
        void *p = realloc(d->regions, cap * sizeof(*d->regions));
        if (!p) {
            snprintf(msg, msg_size, "out of memory");
            return -ENOMEM;
        }
        d->regions = p;
        d->cap_regions = cap;
    }
    r = &d->regions[d->n_regions];
    memset(r, 0, sizeof(*r));
    r->id = d->next_region;
    r->size = size;
    snprintf(r->name, sizeof(r->name), "%s.%u", d->name, r->id);
    rc = region_create(r->name, size, &r->mem);
    if (rc) {
        snprintf(msg, msg_size, "device memory region %s: %s", r->name,
                 strerror(rc));
        return -rc;
    }
    d->next_region++;
    d->n_regions++;
    *id = r->id;
    return 0;
}

int worker__device_free(worker__device *d, uint32_t id, char *msg,
                        size_t msg_size)
{
    for (unsigned i = 0; i < d->n_regions; i++) {
        if (d->regions[i].id != id)
            continue;
        munmap(d->regions[i].mem, d->regions[i].size);
        shm_unlink(d->regions[i].name);
        d->regions[i] = d->regions[--d->n_regions];
        return 0;
    }
    snprintf(msg, msg_size, "device memory region %u is not allocated", id);
    return -ENOENT;
}

int worker__device_run(worker__device *d, unsigned kid, const uint64_t *args,
                       unsigned nargs, uint64_t *result, char *msg,
                       size_t msg_size)
{
    uint64_t r = 0;
    int rc;

    if (kid >= WORKER__K_COUNT || !(d->kernels_loaded & (1u << kid))) {
        snprintf(msg, msg_size, "no kernel with id %u on device %u", kid,
                 d->id);
        return -EIO;
    }
    rc = kernels[kid](d, args, nargs, &r, msg, msg_size);
    if (result)
        *result = r;
    return rc;
}
