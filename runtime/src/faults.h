/* SPDX-License-Identifier: MIT */
/*
 * faults.h — named fault points armed per role (faults.c).
 */
#ifndef WORKER_FAULTS_H
#define WORKER_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpfixture/worker.h"
#include "wire/mailbox.h"

/* ---- fault points ---- */

enum worker__fault_point {
    WORKER__FP_SETUP_BEGIN = 0,   /* child: before its init */
    WORKER__FP_SETUP_END,         /* child: init done, before publication */
    WORKER__FP_AFTER_INIT_FAILED, /* child: INIT_FAILED stored, before _exit */
    WORKER__FP_AFTER_INIT_READY,  /* child: INIT_READY stored, before serving */
    WORKER__FP_SERVE_SHUTDOWN,    /* child: shutdown seen, before teardown */
    WORKER__FP_BEFORE_FORK,       /* parent: before each fork */
    WORKER__FP_BARRIER_POLL,      /* parent: each barrier pass */
    WORKER__FP_ROLLBACK_BEGIN,    /* parent: rollback starts */
    WORKER__FP_ROLLBACK_AFTER_SHUTDOWN, /* parent: SHUTDOWN sent to READY children */
    WORKER__FP_ROLLBACK_AFTER_SIGTERM, /* parent: SIGTERM sent to children in init */
    WORKER__FP_ROLLBACK_AFTER_KILL,   /* parent: SIGKILL sent */
    WORKER__FP_CLOSE_BEGIN,           /* parent: close starts */
    WORKER__FP_CLOSE_AFTER_BROADCAST, /* parent: SHUTDOWN broadcast done */
    WORKER__FP_TASK_BEGIN,            /* child: task taken, before it runs;
                                       fail = the task fails */
    WORKER__FP_TASK_END,              /* child: task ran, before TASK_DONE;
                                       fail = the task fails */
    WORKER__FP_CONTROL,               /* child: in the control handler */
    WORKER__FP_REAP,                  /* parent: before reaping an exited child;
                                       fail = treat it as not reapable yet */
    WORKER__FP_INIT_WAIT,             /* parent: a caller (init, run, control,
                                       device call) starts waiting for a
                                       startup epoch in progress */
    WORKER__FP_BEFORE_INIT_READY,     /* child: setup returned, SIGTERM
                                       blocked, before the READY store;
                                       fail = init fails */
    WORKER__FP_COUNT
};

/* Bit set of the points armed for this process's role. One load and one
   predictable branch when nothing is armed. */
extern uint32_t worker__fault_mask;

/* Run the actions armed at `point`. Returns 0, or -EIO for a fail action,
   with the message copied into msg (if msg_size > 0). */
int worker__fault_fire(unsigned point, char *msg, size_t msg_size);
/* ", at fault point <point> (<action>)" for a child's mailbox whose fault
   word is set (the child died or hung at a scripted fault), else "". */
void worker__fault_note(const worker__mailbox *mb, char *buf, size_t size);

#ifndef WORKER_NO_FAULT_POINTS
#define WORKER__FAULT(point, msg, size)                        \
    (__builtin_expect((worker__fault_mask >> (point)) & 1u, 0) \
         ? worker__fault_fire((point), (msg), (size))          \
         : 0)
#else
/* Compiled out (CMake MPF_FAULT_POINTS=OFF, for benchmarks only): the
   arguments stay referenced so no variable turns unused, and the constant
   condition removes the call. Specs still parse; nothing fires. */
#define WORKER__FAULT(point, msg, size) \
    (0 ? worker__fault_fire((point), (msg), (size)) : 0)
#endif

/* Parse a spec and append its entries to the process table (dry_run: check
   only, the table is unchanged). -EINVAL with a message on a syntax error. */
int worker__faults_parse(const char *spec, bool dry_run, char *msg,
                         size_t msg_size);
/* True if any parsed entry names a gate (so a gate set is needed). */
bool worker__faults_need_gates(void);
/* Recompute worker__fault_mask for the role path (after fork). */
void worker__faults_enter_role(const char *role);
void worker__faults_set_gates(worker_gates *g);
/* Drop the table (root worker closed). */
void worker__faults_reset(void);

#endif /* WORKER_FAULTS_H */
