/* SPDX-License-Identifier: MIT */
/*
 * race_gate.h — release two processes into one race, try after try, with
 * no sleep: the racer is asked to arm (it may be asleep in the kernel),
 * says it is armed and spins on `go`, and the other side then sets `go`
 * and makes its own call at once. A racer that is not on a CPU when the
 * gate opens makes no race, so each side runs on a CPU of its own, and the
 * waits spin (bounded, then a futex wait: a preempted side costs that try
 * its race, never a hang).
 */
#ifndef MPF_RACE_GATE_H
#define MPF_RACE_GATE_H

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct race_gate {
    _Atomic uint32_t req;   /* try + 1: arm for it */
    _Atomic uint32_t armed; /* try + 1: the racer spins on go */
    _Atomic uint32_t go;    /* try + 1: race */
    _Atomic uint32_t done;  /* try + 1: the racer's call returned */
    _Atomic uint32_t quit;  /* 1: the racer leaves */
    _Atomic uint64_t ino;   /* what the racer created (0: nothing) */
    _Atomic int err;        /* errno of the racer's call, 0 on success */
};

/* Each side on a CPU of its own (the k-th of those allowed), where there
   are two: two spinning sides on one CPU take turns and never race. */
static inline void race_gate_pin(int k)
{
    static cpu_set_t allowed; /* as the first call found it (a forked
                                 child inherits it with the memory) */
    static bool known;
    cpu_set_t one;
    if (!known && sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    known = true;
    if (CPU_COUNT(&allowed) < 2)
        return;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == k) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

static inline void race_gate_wait(_Atomic uint32_t *word, uint32_t want,
                                  _Atomic uint32_t *quit)
{
    for (long spin = 0; atomic_load(word) != want; spin++) {
        if (quit && atomic_load(quit))
            return;
        uint32_t seen = atomic_load(word);
        if (spin > 100000 && seen != want)
            syscall(SYS_futex, word, FUTEX_WAIT, seen, NULL, NULL, 0);
    }
}

static inline void race_gate_set(_Atomic uint32_t *word, uint32_t value)
{
    atomic_store(word, value);
    syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* The racer's side of try t: returns once the gate opened (false if it
   was told to leave instead). */
static inline bool race_gate_racer_start(struct race_gate *g, uint32_t t)
{
    race_gate_wait(&g->req, t + 1, &g->quit);
    if (atomic_load(&g->quit))
        return false;
    race_gate_set(&g->armed, t + 1);
    race_gate_wait(&g->go, t + 1, NULL);
    /* Up to a few microseconds that vary from try to try: the racer's
       call lands before, inside and after the other side's. */
    for (volatile unsigned i = 0; i < (t * 37u) % 1009u; i++)
        ;
    return true;
}

static inline void race_gate_racer_done(struct race_gate *g, uint32_t t,
                                        uint64_t ino, int err)
{
    atomic_store(&g->ino, ino);
    atomic_store(&g->err, err);
    race_gate_set(&g->done, t + 1);
}

/* The other side: open the gate, then its own call at once, then
   race_gate_finish. */
static inline void race_gate_open(struct race_gate *g, uint32_t t)
{
    race_gate_set(&g->req, t + 1);
    race_gate_wait(&g->armed, t + 1, NULL);
    /* No wake: the racer spins, and a system call here would hand it a
       head start. One that gave up spinning is woken by race_gate_finish
       (that try makes no race). */
    atomic_store(&g->go, t + 1);
}

static inline void race_gate_finish(struct race_gate *g, uint32_t t)
{
    syscall(SYS_futex, &g->go, FUTEX_WAKE, 1, NULL, NULL, 0);
    race_gate_wait(&g->done, t + 1, NULL);
}

/* Tell the racer to leave, wherever it waits. */
static inline void race_gate_quit(struct race_gate *g)
{
    race_gate_set(&g->quit, 1);
    syscall(SYS_futex, &g->req, FUTEX_WAKE, 1, NULL, NULL, 0);
}

#endif /* MPF_RACE_GATE_H */
