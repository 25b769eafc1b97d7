/* SPDX-License-Identifier: MIT */
/*
 * mailbox.h — the shared-memory wire format between a worker and one child.
 *
 * One POSIX shm object per child, WORKER__MAILBOX_SIZE bytes, made of
 * WORKER__MB_FRAMES frames of the same layout:
 *
 *   frame 0  base/control frame: startup handshake (INIT_READY/INIT_FAILED),
 *            control commands, SHUTDOWN, the sticky shutdown word and the
 *            child's wake-up bell;
 *   frame 1  task frame: TASK_READY / TASK_DONE (overlay worker__mb_task).
 *
 * Frame layout (offsets are part of the format, checked below):
 *
 *   0    u32  magic        WORKER__MB_MAGIC (frame 0; reserved elsewhere)
 *   4    u32  version      WORKER__MB_VERSION
 *   8    u32  state        MailboxState, acquire/release
 *   12   i32  error        0 = ok
 *   16   u64  subcmd       control sub-command / callable id
 *   24   u32  depth        INIT_READY: pipeline depth the child advertises
 *   28   u32  child_pid    written by the child before INIT_*
 *   32   u32  shutdown     sticky, 0 -> 1 only, written by the parent only
 *   36   u32  bell         futex word the child parks on; bumped on every
 *                          parent store that the child must notice
 *   40   u32  fault        frame 0: the fault point and action a child is
 *                          about to die or hang at ((action << 8) |
 *                          (point + 1)), release-stored; 0 = none. The
 *                          parent names it when the child dies or times
 *                          out without a word of its own.
 *   44   u8   reserved0[4]
 *   48   i64  close_by_ns  frame 0: when the parent's graceful wait ends
 *                          (CLOCK_MONOTONIC ns), stored before `shutdown`;
 *                          0 = no deadline. A next-level child ends its
 *                          own subtree's teardown by then, so a hung
 *                          grandchild is killed and reaped by the child
 *                          that owns it, not by its parent's SIGKILL of
 *                          the whole group in the last part of the budget.
 *   56   u8   reserved[8]
 *   64   u8   args[WORKER__MB_ARGS_SIZE]
 *   3840 char msg[256]     NUL-terminated error text
 *
 * Ordering contract: payload fields (error, depth, args, msg) are plain
 * stores made before a release store of `state`; a reader acquire-loads
 * `state` before reading them. The error tuple always precedes
 * TASK_DONE / CONTROL_DONE / INIT_FAILED.
 *
 * The base state word has three writers (parent CONTROL_REQUEST, child
 * CONTROL_DONE, parent back to IDLE), so any of them can overwrite a
 * SHUTDOWN store. Termination therefore lives in the separate one-way
 * `shutdown` word, stored before the state; a child checks it first on
 * every pass of its loop (simpler #1562/#1663).
 */
#ifndef WORKER_MAILBOX_H
#define WORKER_MAILBOX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mpfixture/worker.h" /* WORKER_KERNEL_ARGS_MAX */

/* MailboxState: values 0–7 as in simpler; 8–12 reserved (two-frame
   staging, out of scope), TASK_FAILED = 10 kept for "failed on shutdown". */
enum worker__mb_state {
    WORKER__MB_IDLE = 0,
    WORKER__MB_TASK_READY = 1,
    WORKER__MB_TASK_DONE = 2,
    WORKER__MB_SHUTDOWN = 3,
    WORKER__MB_CONTROL_REQUEST = 4,
    WORKER__MB_CONTROL_DONE = 5,
    WORKER__MB_INIT_READY = 6,
    WORKER__MB_INIT_FAILED = 7,
    WORKER__MB_TASK_FAILED = 10,
};

#define WORKER__MB_MAGIC 0x424d4b57u /* "WKMB" little-endian */
#define WORKER__MB_VERSION \
    5u /* 2: task and control overlays of args;
                                 3: the fault word; 4: internal control
                                 commands from 0x100; 5: close_by_ns */
#define WORKER__MB_FRAME_SIZE 4096u
#define WORKER__MB_FRAMES 2u
#define WORKER__MAILBOX_SIZE (WORKER__MB_FRAME_SIZE * WORKER__MB_FRAMES)
#define WORKER__MB_MSG_SIZE 256u
#define WORKER__MB_ARGS_OFF 64u
#define WORKER__MB_MSG_OFF (WORKER__MB_FRAME_SIZE - WORKER__MB_MSG_SIZE)
#define WORKER__MB_ARGS_SIZE (WORKER__MB_MSG_OFF - WORKER__MB_ARGS_OFF)

typedef struct worker__mb_frame {
    uint32_t magic;
    uint32_t version;
    _Atomic uint32_t state;
    int32_t error;
    uint64_t subcmd;
    uint32_t depth;
    uint32_t child_pid;
    _Atomic uint32_t shutdown;
    _Atomic uint32_t bell;
    _Atomic uint32_t fault;
    uint8_t reserved0[4];
    _Atomic int64_t close_by_ns;
    uint8_t reserved[8];
    uint8_t args[WORKER__MB_ARGS_SIZE];
    char msg[WORKER__MB_MSG_SIZE];
} worker__mb_frame;

_Static_assert(sizeof(_Atomic uint32_t) == 4, "atomic u32 is 4 bytes");
_Static_assert(offsetof(worker__mb_frame, state) == 8, "state at 8");
_Static_assert(offsetof(worker__mb_frame, error) == 12, "error at 12");
_Static_assert(offsetof(worker__mb_frame, subcmd) == 16, "subcmd at 16");
_Static_assert(offsetof(worker__mb_frame, depth) == 24, "depth at 24");
_Static_assert(offsetof(worker__mb_frame, shutdown) == 32, "shutdown at 32");
_Static_assert(offsetof(worker__mb_frame, bell) == 36, "bell at 36");
_Static_assert(offsetof(worker__mb_frame, fault) == 40, "fault at 40");
_Static_assert(offsetof(worker__mb_frame, close_by_ns) == 48,
               "close_by_ns at 48");
_Static_assert(offsetof(worker__mb_frame, args) == WORKER__MB_ARGS_OFF, "args");
_Static_assert(offsetof(worker__mb_frame, msg) == WORKER__MB_MSG_OFF, "msg");
_Static_assert(sizeof(worker__mb_frame) == WORKER__MB_FRAME_SIZE, "frame size");

/*
 * Overlays of the args area.
 *
 * Task frame (frame 1): the parent writes seq, the callable/kernel id (in
 * subcmd), kernel arguments or the argument blob, clears the error tuple,
 * then release-stores TASK_READY. The child writes result, done_seq (= the
 * seq it served) and the error tuple, then release-stores TASK_DONE. The
 * parent checks done_seq against the seq it dispatched (a late or stale
 * publication poisons the endpoint) and stores IDLE.
 *
 * Control (frame 0): subcmd is the control sub-command, arg its argument;
 * the child writes result and the error tuple before CONTROL_DONE.
 */
#define WORKER__MB_KARGS 6u
/* Paired limits: the mailbox carries every argument a task may have. */
_Static_assert(WORKER__MB_KARGS == WORKER_KERNEL_ARGS_MAX,
               "task kernel arguments: mailbox slots = public maximum");

typedef struct worker__mb_task {
    uint64_t seq;
    uint64_t done_seq;
    uint64_t result;
    uint32_t nkargs;
    uint32_t len;
    uint64_t kargs[WORKER__MB_KARGS];
    uint8_t blob[];
} worker__mb_task;

#define WORKER__MB_BLOB_MAX (WORKER__MB_ARGS_SIZE - sizeof(worker__mb_task))
_Static_assert(WORKER__MB_ARGS_SIZE - 80 >= 3072,
               "the task blob holds WORKER_TASK_ARGS_MAX bytes");

typedef struct worker__mb_ctl {
    uint64_t arg;
    uint64_t result;
} worker__mb_ctl;

_Static_assert(offsetof(worker__mb_task, kargs) == 32, "kargs at args+32");
_Static_assert(sizeof(worker__mb_task) == 80, "task header is 80 bytes");
_Static_assert(sizeof(worker__mb_ctl) <= WORKER__MB_ARGS_SIZE,
               "control overlay");

static inline worker__mb_task *worker__mb_task_of(worker__mb_frame *f)
{
    return (worker__mb_task *)(void *)f->args;
}

static inline worker__mb_ctl *worker__mb_ctl_of(worker__mb_frame *f)
{
    return (worker__mb_ctl *)(void *)f->args;
}

/* Internal control sub-commands, in their own range (the public ones,
   from 0, are in worker.h). */
enum {
    WORKER__CTRL_DEV_ALLOC = 0x100, /* chip: arg = bytes; result = region id */
    WORKER__CTRL_DEV_FREE = 0x101,  /* chip: arg = region id */
};

typedef struct worker__mailbox {
    worker__mb_frame frame[WORKER__MB_FRAMES];
} worker__mailbox;

_Static_assert(sizeof(worker__mailbox) == WORKER__MAILBOX_SIZE, "mailbox size");

/* Create a mailbox shm object (O_CREAT|O_EXCL, 0600, posix_fallocate),
   map it, stamp magic/version, state IDLE. The name is kept by the caller.
   Returns 0 or a negative errno; nothing is left on failure. */
int worker__mailbox_create(const char *name, worker__mailbox **ret);
/* Keep the mailbox out of every later fork (MADV_DONTFORK): the parent
   calls it right after the fork of the mailbox's owner, so that siblings
   forked after it neither inherit the mapping nor have to unmap it. True
   if done (a child still unmaps a sibling's mailbox it was not done for). */
bool worker__mailbox_keep_from_forks(worker__mailbox *mb);
/* munmap (NULL ok). Does not unlink. */
void worker__mailbox_unmap(worker__mailbox *mb);
/* True if magic and version match. */
int worker__mailbox_check(const worker__mailbox *mb);

static inline uint32_t worker__mb_load(const _Atomic uint32_t *w)
{
    return atomic_load_explicit(w, memory_order_acquire);
}

static inline void worker__mb_store(_Atomic uint32_t *w, uint32_t v)
{
    atomic_store_explicit(w, v, memory_order_release);
}

/* Write the error tuple (code, message truncated to 255 bytes and
   zero-padded) of a frame. Plain stores: publish with a release of state. */
void worker__mb_write_error(worker__mb_frame *f, int32_t code, const char *msg);

/* Parent side: wake the child parked on the bell. */
void worker__mb_ring_child(worker__mailbox *mb);

/* Parent side: sticky shutdown word, then the state, then the bell. */
/* by_ns: the parent's graceful deadline (close_by_ns), 0 for none. */
void worker__mb_send_shutdown(worker__mailbox *mb, int64_t by_ns);

#endif /* WORKER_MAILBOX_H */
