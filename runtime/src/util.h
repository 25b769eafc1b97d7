/* SPDX-License-Identifier: MIT */
/*
 * util.h — the bottom layer of libworker (util.c): names, time, numbers
 * in specs, futexes, error text, a spin-wait hint.
 */
#ifndef WORKER_UTIL_H
#define WORKER_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpfixture/worker.h"

#define WORKER__NAME_MAX 96

/* libmpfworker is built with hidden visibility: only the definitions
   marked with this are exported — the API of worker.h and the testing
   calls of testing.h (tests/runtime/test_exports checks the list). */
#define WORKER__EXPORT __attribute__((visibility("default")))

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t worker__now_ns(void);
int64_t worker__s_to_ns(double s);

/* ---- numbers in specs ---- */

/* Parse len bytes of decimal digits (nothing else: no sign, no blanks) into
   *out. Returns 0, -EINVAL (empty or not all digits) or -ERANGE (above max,
   overflow included: a value is never wrapped). */
int worker__parse_decimal(const char *s, size_t len, unsigned long long max,
                          unsigned long long *out);

/* ---- futex ---- */

/* Wait while *word == expected, until deadline_ns (0: no deadline). Returns
   0 on wake/value change, -ETIMEDOUT, or -EINTR. Shared (not private) so it
   works across processes on MAP_SHARED memory. */
int worker__futex_wait(_Atomic uint32_t *word, uint32_t expected,
                       int64_t deadline_ns);
void worker__futex_wake(_Atomic uint32_t *word, int n);
/* True if this thread may run on one CPU only (taskset, a cpuset of one):
   whoever it waits for cannot run while it spins, so it yields instead. */
bool worker__on_one_cpu(void);

/* ---- error text ---- */

/* snprintf that truncates on purpose (no truncation warning). */
void worker__fmt(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void worker__set_error(worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A nonblocking, close-on-exec eventfd into *fd: 0, or -errno with the
   error text "eventfd: <why>" set on w. */
int worker__eventfd(worker *w, int *fd);

/* ---- memory of a worker's own ---- */

/* Zeroed memory in an anonymous mapping of its own (size rounded up to
   pages), or NULL with errno set; freed by worker__pages_free with the
   same size. For the handle and its child records: see util.c. */
void *worker__pages_alloc(size_t size);
void worker__pages_free(void *p, size_t size);

/* A spin-wait hint to the CPU, where the architecture has one. */
static inline void worker__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif /* WORKER_UTIL_H */
