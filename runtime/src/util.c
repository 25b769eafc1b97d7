/* SPDX-License-Identifier: MIT */
/*
 * util.c — clocks, spec numbers, futexes and the per-handle error text.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int64_t worker__now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t worker__s_to_ns(double s)
{
    if (s > 9.0e9)
        return INT64_MAX / 4;
    return (int64_t)(s * 1e9);
}

int worker__parse_decimal(const char *s, size_t len, unsigned long long max,
                          unsigned long long *out)
{
    unsigned long long v = 0;
    bool over = false;

    if (len == 0)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        /* Keep scanning after an overflow: "12x" past the range is still
           not a number. */
        if (!over && (v > (ULLONG_MAX - (unsigned)(s[i] - '0')) / 10))
            over = true;
        else if (!over)
            v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (over || v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

int worker__futex_wait(_Atomic uint32_t *word, uint32_t expected,
                       int64_t deadline_ns)
{
    struct timespec ts, *tsp = NULL;

    if (deadline_ns) {
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, so a
           wait restarted after EINTR keeps the same deadline. */
        if (deadline_ns <= worker__now_ns())
            return -ETIMEDOUT;
        ts.tv_sec = deadline_ns / 1000000000;
        ts.tv_nsec = deadline_ns % 1000000000;
        tsp = &ts;
    }
    long r = syscall(SYS_futex, word, FUTEX_WAIT_BITSET, expected, tsp, NULL,
                     FUTEX_BITSET_MATCH_ANY);
    if (r == 0 || errno == EAGAIN)
        return 0;
    return errno == ETIMEDOUT ? -ETIMEDOUT : -EINTR;
}

bool worker__on_one_cpu(void)
{
    cpu_set_t cpus;

    return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 &&
           CPU_COUNT(&cpus) == 1;
}

void worker__futex_wake(_Atomic uint32_t *word, int n)
{
    syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
}

void worker__set_error(worker *w, const char *fmt, ...)
{
    char buf[sizeof(w->last_error)];
    va_list ap;

    /* Format first (the arguments may point into last_error itself), then
       copy under the lock so two threads never interleave their text. */
    va_start(ap, fmt);
    /* clang-tidy 14 loses the va_start above (a known false positive). */
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&w->err_mu);
    memcpy(w->last_error, buf, sizeof(buf));
    pthread_mutex_unlock(&w->err_mu);
}

int worker__eventfd(worker *w, int *fd)
{
    int rc;

    *fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (*fd >= 0)
        return 0;
    rc = -errno;
    worker__set_error(w, "eventfd: %s", strerror(errno));
    return rc;
}

void worker__fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    /* Truncation is the contract here (error text is capped per hop). */
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): as above */
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

/* ---- names of the public enums ---- */

static const char *const state_names[] = {
    "NEW", "INITIALIZING", "READY", "FAILED", "CLOSED",
};

WORKER__EXPORT const char *worker_state_name(worker_state state)
{
    return (unsigned)state < 5 ? state_names[state] : "?";
}

WORKER__EXPORT const char *worker_child_kind_name(worker_child_kind kind)
{
    switch (kind) {
    case WORKER_CHILD_SUB:
        return "sub";
    case WORKER_CHILD_CHIP:
        return "chip";
    case WORKER_CHILD_NEXT:
        return "next";
    }
    return "?";
}

/*
 * The handle and the child records are the memory the parent writes
 * between one fork and the next, and each child reads. They live in
 * mappings of their own, not on malloc's heap: measured with
 * bench/compare.sh (bench_tree rt:64, medians of 25 interleaved rounds,
 * 2 cores), a 64-chip init and close took 9 to 13% longer with both on the
 * heap, as calloc() places them, than with both in mappings of their own;
 * page-aligned blocks on the heap were no faster, so it is the heap's
 * mapping, not pages shared with other allocations.
 *
 * Leak checkers must still see a handle never freed, and what it points
 * to: valgrind's memcheck is told each mapping is a heap block
 * (MALLOCLIKE), so it checks it as one. LeakSanitizer has no such call and
 * does not scan mappings, so under AddressSanitizer the memory comes from
 * calloc(), as it did before.
 */
#if defined(__SANITIZE_ADDRESS__)
#define PAGES_FROM_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAGES_FROM_HEAP 1
#endif
#endif
#if !defined(PAGES_FROM_HEAP) && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MALLOCLIKE_BLOCK
#define VALGRIND_MALLOCLIKE_BLOCK(addr, size, redzone, zeroed) ((void)0)
#define VALGRIND_FREELIKE_BLOCK(addr, redzone) ((void)0)
#endif

#ifdef PAGES_FROM_HEAP
void *worker__pages_alloc(size_t size)
{
    return calloc(1, size);
}

void worker__pages_free(void *p, size_t size)
{
    (void)size;
    free(p);
}
#else
static size_t page_round(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return (size + page - 1) / page * page;
}

void *worker__pages_alloc(size_t size)
{
    void *p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 1);
    return p;
}

void worker__pages_free(void *p, size_t size)
{
    if (!p)
        return;
    VALGRIND_FREELIKE_BLOCK(p, 0);
    munmap(p, page_round(size));
}
#endif
