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

/*
 * The fault points. The enum (WORKER__FP_<ID>) and the names fault specs
 * use (worker_fault_point_name) are both made from this one list. Where
 * each point is, and what "fail" does there where it is not the default:
 *   setup_begin              child: before its init
 *   setup_end                child: init done, before publication
 *   after_init_failed        child: INIT_FAILED stored, before _exit
 *   after_init_ready         child: INIT_READY stored, before serving
 *   serve_shutdown           child: shutdown seen, before teardown
 *   before_fork              parent: before each fork
 *   barrier_poll             parent: each barrier pass
 *   rollback_begin           parent: rollback starts
 *   rollback_after_shutdown  parent: SHUTDOWN sent to READY children
 *   rollback_after_sigterm   parent: SIGTERM sent to children in init
 *   rollback_after_kill      parent: SIGKILL sent
 *   close_begin              parent: close starts
 *   close_after_broadcast    parent: SHUTDOWN broadcast done
 *   task_begin               child: task taken, before it runs; fail = the
 *                            task fails
 *   task_end                 child: task ran, before TASK_DONE; fail = the
 *                            task fails
 *   control                  child: in the control handler
 *   reap                     parent: before reaping an exited child; fail =
 *                            treat it as not reapable yet
 *   init_wait                parent: a caller (init, run, control, device
 *                            call) starts waiting for a startup epoch in
 *                            progress
 *   before_init_ready        child: setup returned, SIGTERM blocked, before
 *                            the READY store; fail = init fails
 */
#define WORKER__FAULT_POINTS(X)                         \
    X(SETUP_BEGIN, setup_begin)                         \
    X(SETUP_END, setup_end)                             \
    X(AFTER_INIT_FAILED, after_init_failed)             \
    X(AFTER_INIT_READY, after_init_ready)               \
    X(SERVE_SHUTDOWN, serve_shutdown)                   \
    X(BEFORE_FORK, before_fork)                         \
    X(BARRIER_POLL, barrier_poll)                       \
    X(ROLLBACK_BEGIN, rollback_begin)                   \
    X(ROLLBACK_AFTER_SHUTDOWN, rollback_after_shutdown) \
    X(ROLLBACK_AFTER_SIGTERM, rollback_after_sigterm)   \
    X(ROLLBACK_AFTER_KILL, rollback_after_kill)         \
    X(CLOSE_BEGIN, close_begin)                         \
    X(CLOSE_AFTER_BROADCAST, close_after_broadcast)     \
    X(TASK_BEGIN, task_begin)                           \
    X(TASK_END, task_end)                               \
    X(CONTROL, control)                                 \
    X(REAP, reap)                                       \
    X(INIT_WAIT, init_wait)                             \
    X(BEFORE_INIT_READY, before_init_ready)

#define WORKER__FP_ENUMERATOR(id, name) WORKER__FP_##id,
enum worker__fault_point {
    WORKER__FAULT_POINTS(WORKER__FP_ENUMERATOR) /* WORKER__FP_<ID>, */
    WORKER__FP_COUNT
};
#undef WORKER__FP_ENUMERATOR

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
