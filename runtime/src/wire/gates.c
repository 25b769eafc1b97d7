/* SPDX-License-Identifier: MIT */
/*
 * gates.c — shared futex gates for deterministic interleavings.
 *
 * The set lives in an anonymous MAP_SHARED mapping: every process forked
 * after worker_gates_new() shares it, and it has no name to leak. Futex
 * calls are the shared (non-private) kind because waiters are in other
 * processes.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "mailbox.h"
#include "util.h"
#include "wire.h"

struct worker_gate {
    _Atomic uint32_t open;
    _Atomic uint32_t arrivals;
};

struct worker_gates {
    struct worker_gate gate[WORKER_GATES_COUNT];
};

WORKER__EXPORT int worker_gates_new(worker_gates **ret)
{
    void *p;

    if (!ret)
        return -EINVAL;
    p = mmap(NULL, sizeof(worker_gates), PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    *ret = p; /* zero-filled: every gate closed, no arrivals */
    return 0;
}

WORKER__EXPORT void worker_gates_free(worker_gates *g)
{
    if (g)
        munmap(g, sizeof(*g));
}

WORKER__EXPORT int worker_gate_open(worker_gates *g, unsigned i)
{
    if (!g || i >= WORKER_GATES_COUNT)
        return -EINVAL;
    worker__mb_store(&g->gate[i].open, 1);
    worker__futex_wake(&g->gate[i].open, 1 << 30);
    return 0;
}

WORKER__EXPORT int worker_gate_reset(worker_gates *g, unsigned i)
{
    if (!g || i >= WORKER_GATES_COUNT)
        return -EINVAL;
    worker__mb_store(&g->gate[i].open, 0);
    worker__mb_store(&g->gate[i].arrivals, 0);
    return 0;
}

WORKER__EXPORT unsigned worker_gate_arrivals(const worker_gates *g, unsigned i)
{
    if (!g || i >= WORKER_GATES_COUNT)
        return 0;
    return worker__mb_load(&g->gate[i].arrivals);
}

WORKER__EXPORT int worker_gate_await_arrivals(worker_gates *g, unsigned i,
                                              unsigned n, unsigned timeout_ms)
{
    int64_t deadline;

    if (!g || i >= WORKER_GATES_COUNT)
        return -EINVAL;
    deadline = worker__now_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        uint32_t a = worker__mb_load(&g->gate[i].arrivals);

        if (a >= n)
            return 0;
        if (worker__futex_wait(&g->gate[i].arrivals, a, deadline) == -ETIMEDOUT)
            return worker__mb_load(&g->gate[i].arrivals) >= n ? 0 : -ETIMEDOUT;
    }
}

/* Fault action gate_wait(i): count the arrival, wake whoever awaits it,
   then block until the gate opens. Signals interrupt the wait but not the
   gate: only an open gate (or SIGKILL) ends it. */
void worker__gate_wait(worker_gates *g, unsigned i)
{
    atomic_fetch_add_explicit(&g->gate[i].arrivals, 1, memory_order_acq_rel);
    worker__futex_wake(&g->gate[i].arrivals, 1 << 30);
    while (!worker__mb_load(&g->gate[i].open))
        worker__futex_wait(&g->gate[i].open, 0, 0);
}

bool worker__gate_is_open(const worker_gates *g, unsigned i)
{
    return worker__mb_load(&((worker_gates *)g)->gate[i].open) != 0;
}
