/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h — the few helpers every benchmark of bench/ shares: a
 * monotonic clock, order statistics, the futex calls the runtime itself
 * uses (shared, not private: the word lives in a MAP_SHARED page), and the
 * two output forms run.sh and report.py read:
 *
 *   sample <label> <round> <value>     one measurement (ns unless said)
 *   stat <label> <p50> <p90> <n>       order statistics computed in C
 *
 * Header-only, static functions: each benchmark is one .c file.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <sched.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int bench_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; q in [0, 1] (nearest rank). */
static inline int64_t bench_quantile(int64_t *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, bench_cmp_i64);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* Same futex calls as runtime/src/util.c: shared (no FUTEX_PRIVATE_FLAG). */
static inline void bench_futex_wait(_Atomic uint32_t *w, uint32_t expected)
{
    syscall(SYS_futex, w, FUTEX_WAIT_BITSET, expected, NULL, NULL,
            FUTEX_BITSET_MATCH_ANY);
}

static inline void bench_futex_wake(_Atomic uint32_t *w, int n)
{
    syscall(SYS_futex, w, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* The runtime child's spin budget (child.c): 200 pauses, none where the
   process may run on one CPU only (it yields once instead). */
static inline int bench_spins(void)
{
    static int spins = -1;
    if (spins < 0) {
        cpu_set_t cpus;
        spins = sched_getaffinity(0, sizeof cpus, &cpus) == 0 &&
                        CPU_COUNT(&cpus) == 1
                    ? 0
                    : 200;
    }
    return spins;
}

/* The runtime child's wait: its spin budget on the word, then park. */
static inline void bench_spin_then_park(_Atomic uint32_t *w, uint32_t seq)
{
    for (int spin = 0; spin < bench_spins(); spin++) {
        if (atomic_load_explicit(w, memory_order_acquire) != seq)
            return;
        __builtin_ia32_pause();
    }
    if (!bench_spins()) {
        sched_yield();
        if (atomic_load_explicit(w, memory_order_acquire) != seq)
            return;
    }
    bench_futex_wait(w, seq);
}

#define BENCH_DIE(...)                          \
    do {                                        \
        fprintf(stderr, "bench: " __VA_ARGS__); \
        fputc('\n', stderr);                    \
        exit(1);                                \
    } while (0)

#endif /* BENCH_UTIL_H */
