/* SPDX-License-Identifier: MIT */
/*
 * mailbox.h — the shared-memory wire format between a worker and one child.
 *
 * One POSIX shm object per child, WORKER__MAILBOX_SIZE bytes:
 *
 *   0      frame 0, the base/control frame (WORKER__MB_FRAME_SIZE bytes,
 *          worker__mb_frame): startup handshake (INIT_READY /
 *          INIT_FAILED), control commands, SHUTDOWN, the sticky shutdown
 *          word, the child's wake-up bell and the two words that decide
 *          who must wake whom (parked, listen);
 *   4096   the task ring: WORKER__MB_TASK_SLOTS slots of
 *          WORKER__MB_SLOT_SIZE bytes (worker__mb_slot), TASK_READY /
 *          TASK_DONE each. The task numbered `seq` (1, 2, ... per child)
 *          lives in slot (seq - 1) % WORKER__MB_TASK_SLOTS;
 *   then   the blob area, WORKER__MB_BLOB_AREA bytes: the argument blobs
 *          of the tasks in the ring, where their slots say.
 *
 * Slots are small (a task's header and its error text) and the blobs
 * share one area, so a ring of many tasks costs a few pages. Frame 0 and
 * the ring's first page are reserved at creation, the rest of the ring and
 * the blob area when the parent puts the child's first task
 * (worker__mailbox_have_ring): a tree's start pays two pages a chip, not
 * six.
 *
 * Frame 0 (offsets are part of the format, checked below):
 *
 *   0    u32  magic        WORKER__MB_MAGIC
 *   4    u32  version      WORKER__MB_VERSION
 *   8    u32  state        MailboxState, acquire/release
 *   12   i32  error        0 = ok
 *   16   u64  subcmd       control sub-command / callable id
 *   24   u32  depth        INIT_READY: pipeline depth the child advertises
 *   28   u32  child_pid    written by the child before INIT_*
 *   32   u32  shutdown     sticky, 0 -> 1 only, written by the parent only
 *   36   u32  bell         futex word the child parks on; bumped on every
 *                          parent store that the child must notice while
 *                          parked
 *   40   u32  fault        the fault point and action a child is
 *                          about to die or hang at ((action << 8) |
 *                          (point + 1)), release-stored; 0 = none. The
 *                          parent names it when the child dies or times
 *                          out without a word of its own.
 *   44   u32  parked       1 while the child is about to park or
 *                          parked on the bell; set by the child, taken
 *                          back to 0 by the parent that rings it
 *   48   i64  close_by_ns  when the parent's graceful wait ends
 *                          (CLOCK_MONOTONIC ns), stored before `shutdown`;
 *                          0 = no deadline. A next-level child ends its
 *                          own subtree's teardown by then, so a hung
 *                          grandchild is killed and reaped by the child
 *                          that owns it, not by its parent's SIGKILL of
 *                          the whole group in the last part of the budget.
 *   56   u32  listen       how the parent's scheduler, parked,
 *                          wants to hear of task completions
 *                          (WORKER__MB_LISTEN_*); armed by the parent,
 *                          taken back to OFF by whichever side acts on it
 *   60   u8   reserved[4]
 *   64   u8   args[WORKER__MB_ARGS_SIZE]  control overlay (below)
 *   3840 char msg[256]     NUL-terminated error text
 *
 * A task slot:
 *
 *   0    u32  state        IDLE / TASK_READY / TASK_DONE, acquire/release
 *   4    i32  error        0 = ok
 *   8    u64  callable     sub callable, kernel or orchestration id
 *   16   u64  seq          parent: the task's number
 *   24   u64  done_seq     child: the number it served
 *   32   u64  result       child: the kernel's result
 *   40   u64  after        parent: bit i = depends on the task numbered
 *                          seq - 1 - i, still in the ring
 *   48   u32  nkargs       parent: kernel arguments
 *   52   u32  len          parent: blob bytes
 *   56   u32  blob_off     parent: where the blob starts in the blob area
 *   60   u32  skipped      child: WORKER__MB_SKIP_*, 0 = it ran
 *   64   u64  kargs[6]
 *   112  u8   reserved[144]
 *   256  char msg[256]     NUL-terminated error text
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
 *
 * The task ring has one producer (the parent, under its dispatch lock) and
 * one consumer (the child). A slot goes IDLE -> TASK_READY (parent) ->
 * TASK_DONE (child) -> IDLE (parent, after it read the result); the slot
 * states are the ring's head and tail: the child serves slot after slot
 * while the next one is TASK_READY, the parent collects slot after slot
 * while the oldest one in flight is TASK_DONE, so no counter is shared.
 * The parent fills a slot only when it is IDLE and at most S tasks are in
 * flight; a slot found in any other state breaks the protocol. The parent
 * writes the slot (and its blob) with plain stores, then release-stores
 * TASK_READY; the child acquire-loads it before reading them, writes
 * result, done_seq, skipped and the error tuple, then release-stores
 * TASK_DONE. The parent checks done_seq against the seq it put in that
 * slot (a late or stale publication poisons the endpoint) and stores
 * IDLE.
 *
 * The blob area is a byte ring the parent alone manages: it writes each
 * blob after the previous one (starting over at offset 0 when a blob
 * would not fit before the end, and whenever the ring is empty), and
 * reuses the bytes of a task once it collected it. Tasks are collected in
 * the order they were put, so the bytes in use are always one stretch of
 * the ring. The child only reads the bytes a slot names.
 *
 * Wake-ups, parent -> child. A child that finds its next slot not READY
 * (the ring is empty) spins briefly (where it may run on one CPU only,
 * it yields that CPU once instead), then stores parked = 1, issues a
 * full fence, re-checks the shutdown word, the base state and its next
 * slot, and only then parks on the bell (futex, with the bell value it
 * read before all of these checks). The parent stores TASK_READY, issues
 * a full fence, then reads `parked` and rings the bell only if it is 1,
 * taking it back to 0 (exchange) so that the tasks it puts before the
 * child runs again ring no more. Store, fence, load on both sides: at
 * least one of them sees the other's store, so either the child's
 * re-check finds the task or the parent rings; and a ring after the child
 * read the bell makes its futex wait return at once. A child that is
 * running (or spinning) is never rung for a task: it finds the task when
 * it looks at the slot. Control commands and SHUTDOWN ring the bell
 * unconditionally.
 *
 * Wake-ups, child -> parent. The child tells the parent's scheduler of
 * completions through the parent's doorbell eventfd, and only when the
 * scheduler asked for it: before it parks, the scheduler stores `listen`
 * (BATCH or EACH) in the mailbox of every child with tasks in flight,
 * issues a full fence and looks at their oldest slots again; when it
 * wakes it stores OFF and fences before collecting. A task put while the
 * scheduler is parked arms `listen` itself, before its TASK_READY: the
 * child reads the word after it acquired the task. After each TASK_DONE
 * the child fences and reads `listen`: EACH, it takes the word back to OFF
 * (exchange) and rings if it got EACH; BATCH, it notes a completion owed
 * and, when its ring is empty (the end of the batch), takes the word back
 * to OFF and rings if it got anything but OFF. A child that read OFF (or
 * that lost the exchange) does not ring: the scheduler was awake then,
 * and its own fence-then-look finds the completion. EACH is for
 * completions someone waits for one by one (a task waiter, a task of
 * another target that depends on this one, or tasks of several jobs in
 * one ring); BATCH wakes the scheduler once per batch. With the WAITERS
 * flag beside the level (threads of the parent are waiting, and collect
 * completions themselves while the scheduler is parked), the child that
 * takes the word rings no doorbell: it bumps the parent's progress word,
 * in a page the parent shared before the fork, and futex-wakes it.
 *
 * Dependencies inside a ring. The parent may queue a task behind tasks it
 * depends on that are still in the same ring (they run first: one ring is
 * served in order). Bit i of the slot's `after` names the task dispatched
 * i + 1 before it; if any of them failed or was skipped, the child skips
 * the task (publishes it as failed and `skipped`, without running it) and
 * the parent reports it as poisoned by the failed dependency. A child that
 * leaves on SHUTDOWN publishes the tasks left in its ring the same way
 * (SKIP_SHUTDOWN), so they fail as not run, like the tasks still queued
 * in the parent.
 */
#ifndef WORKER_MAILBOX_H
#define WORKER_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
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
/* 2: task and control overlays of args; 3: the fault word; 4: internal
   control commands from 0x100; 5: close_by_ns; 6: the task ring (slots,
   blob area, parked, listen); 7: listen's WAITERS flag. */
#define WORKER__MB_VERSION 7u
#define WORKER__MB_FRAME_SIZE 4096u
#define WORKER__MB_FRAMES 1u /* the base frame */
/* Tasks one child may have in flight: its batch at most. */
#define WORKER__MB_TASK_SLOTS 32u
#define WORKER__MB_SLOT_SIZE 512u
#define WORKER__MB_BLOB_AREA 4096u
/* Where the task ring begins: after the frames. */
#define WORKER__MB_RING_OFF (WORKER__MB_FRAME_SIZE * WORKER__MB_FRAMES)
#define WORKER__MAILBOX_SIZE                     \
    (WORKER__MB_FRAME_SIZE * WORKER__MB_FRAMES + \
     WORKER__MB_SLOT_SIZE * WORKER__MB_TASK_SLOTS + WORKER__MB_BLOB_AREA)
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
    _Atomic uint32_t parked;
    _Atomic int64_t close_by_ns;
    _Atomic uint32_t listen;
    uint8_t reserved[4];
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
_Static_assert(offsetof(worker__mb_frame, parked) == 44, "parked at 44");
_Static_assert(offsetof(worker__mb_frame, close_by_ns) == 48,
               "close_by_ns at 48");
_Static_assert(offsetof(worker__mb_frame, listen) == 56, "listen at 56");
_Static_assert(offsetof(worker__mb_frame, args) == WORKER__MB_ARGS_OFF, "args");
_Static_assert(offsetof(worker__mb_frame, msg) == WORKER__MB_MSG_OFF, "msg");
_Static_assert(sizeof(worker__mb_frame) == WORKER__MB_FRAME_SIZE, "frame size");

/*
 * The control overlay of frame 0's args area: subcmd is the control
 * sub-command, arg its argument; the child writes result and the error
 * tuple before CONTROL_DONE.
 */
typedef struct worker__mb_ctl {
    uint64_t arg;
    uint64_t result;
} worker__mb_ctl;

_Static_assert(sizeof(worker__mb_ctl) <= WORKER__MB_ARGS_SIZE,
               "control overlay");

static inline worker__mb_ctl *worker__mb_ctl_of(worker__mb_frame *f)
{
    return (worker__mb_ctl *)(void *)f->args;
}

/* A task slot of the ring (layout in the comment at the top). */
#define WORKER__MB_KARGS 6u
/* Paired limits: the mailbox carries every argument a task may have. */
_Static_assert(WORKER__MB_KARGS == WORKER_KERNEL_ARGS_MAX,
               "task kernel arguments: mailbox slots = public maximum");

typedef struct worker__mb_slot {
    _Atomic uint32_t state;
    int32_t error;
    uint64_t callable;
    uint64_t seq;
    uint64_t done_seq;
    uint64_t result;
    uint64_t after;
    uint32_t nkargs;
    uint32_t len;
    uint32_t blob_off;
    uint32_t skipped;
    uint64_t kargs[WORKER__MB_KARGS];
    uint8_t reserved[144];
    char msg[WORKER__MB_MSG_SIZE];
} worker__mb_slot;

_Static_assert(offsetof(worker__mb_slot, state) == 0, "slot state at 0");
_Static_assert(offsetof(worker__mb_slot, error) == 4, "slot error at 4");
_Static_assert(offsetof(worker__mb_slot, callable) == 8, "callable at 8");
_Static_assert(offsetof(worker__mb_slot, seq) == 16, "seq at 16");
_Static_assert(offsetof(worker__mb_slot, done_seq) == 24, "done_seq at 24");
_Static_assert(offsetof(worker__mb_slot, result) == 32, "result at 32");
_Static_assert(offsetof(worker__mb_slot, after) == 40, "after at 40");
_Static_assert(offsetof(worker__mb_slot, nkargs) == 48, "nkargs at 48");
_Static_assert(offsetof(worker__mb_slot, len) == 52, "len at 52");
_Static_assert(offsetof(worker__mb_slot, blob_off) == 56, "blob_off at 56");
_Static_assert(offsetof(worker__mb_slot, skipped) == 60, "skipped at 60");
_Static_assert(offsetof(worker__mb_slot, kargs) == 64, "kargs at 64");
_Static_assert(offsetof(worker__mb_slot, msg) == 256, "slot msg at 256");
_Static_assert(sizeof(worker__mb_slot) == WORKER__MB_SLOT_SIZE, "slot size");
/* Two tasks in one ring are less than S dispatches apart: bit S - 2 of
   `after` is the farthest one (S - 1 for a task weighed while the ring is
   full, dispatch/runq.c). */
_Static_assert(WORKER__MB_TASK_SLOTS >= 2 && WORKER__MB_TASK_SLOTS <= 64,
               "every dependency inside a ring has its bit in `after`");
/* The most one task carries: a task with the largest blob fits once the
   ring is drained (the parent starts the area over at offset 0 then). */
#define WORKER__MB_BLOB_MAX WORKER_TASK_ARGS_MAX
_Static_assert(WORKER__MB_BLOB_AREA >= WORKER__MB_BLOB_MAX,
               "the blob area holds the largest blob");

/* Why the child published a task it did not run (`skipped`). */
enum worker__mb_skip {
    WORKER__MB_RAN = 0,
    WORKER__MB_SKIP_DEPENDENCY = 1, /* an `after` task failed */
    WORKER__MB_SKIP_SHUTDOWN = 2,   /* the child was leaving on SHUTDOWN */
};

/* How a parked scheduler wants to hear of task completions (`listen`):
   a level, and a flag for who is told. */
enum worker__mb_listen {
    WORKER__MB_LISTEN_OFF = 0,   /* the scheduler is awake: no ring */
    WORKER__MB_LISTEN_BATCH = 1, /* ring once the ring is empty */
    WORKER__MB_LISTEN_EACH = 2,  /* ring at the next completion */
    WORKER__MB_LISTEN_LEVEL = 3, /* the bits of the level */
    /* Flag: threads of the parent wait and collect themselves; wake them
       on the parent's progress word instead of ringing its doorbell. */
    WORKER__MB_LISTEN_WAITERS = 4,
};

/* Internal control sub-commands, in their own range (the public ones,
   from 0, are in worker.h). */
enum {
    WORKER__CTRL_DEV_ALLOC = 0x100, /* chip: arg = bytes; result = region id */
    WORKER__CTRL_DEV_FREE = 0x101,  /* chip: arg = region id */
};

typedef struct worker__mailbox {
    worker__mb_frame frame[WORKER__MB_FRAMES];
    worker__mb_slot slot[WORKER__MB_TASK_SLOTS];
    uint8_t blobs[WORKER__MB_BLOB_AREA];
} worker__mailbox;

_Static_assert(offsetof(worker__mailbox, slot) == WORKER__MB_FRAME_SIZE,
               "the ring follows frame 0");
_Static_assert(sizeof(worker__mailbox) == WORKER__MAILBOX_SIZE, "mailbox size");
_Static_assert(WORKER__MAILBOX_SIZE % 4096 == 0, "whole pages");

/* The slot of task number seq (from 1). */
static inline worker__mb_slot *worker__mb_slot_of(worker__mailbox *mb,
                                                  uint64_t seq)
{
    return &mb->slot[(seq - 1) % WORKER__MB_TASK_SLOTS];
}

/* Create a mailbox shm object (O_CREAT|O_EXCL, 0600, its first two pages
   reserved with posix_fallocate), map it, stamp magic/version, state IDLE. The name
   is kept by the caller. Returns 0 or a negative errno; nothing is left on
   failure. */
int worker__mailbox_create(const char *name, worker__mailbox **ret);
/* Reserve the rest of the ring and the blob area, before anything touches them
   (MADV_POPULATE_WRITE: a full tmpfs is -ENOSPC here, not a SIGBUS in
   whichever process touches them first). 0 or a negative errno. A kernel
   without it (before Linux 5.14) had them reserved at creation. */
int worker__mailbox_have_ring(worker__mailbox *mb);
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
   zero-padded) of a frame or a slot. Plain stores: publish with a release
   of state. */
void worker__mb_write_error(worker__mb_frame *f, int32_t code, const char *msg);
void worker__mb_slot_write_error(worker__mb_slot *s, int32_t code,
                                 const char *msg);

/* Parent side: wake the child parked on the bell. */
void worker__mb_ring_child(worker__mailbox *mb);
/* Parent side, after storing TASK_READY into one or more slots: ring the
   bell if the child is parked or about to park (the fence-then-look of
   the header comment). True if it rang. */
bool worker__mb_wake_parked_child(worker__mailbox *mb);

/* Parent side: sticky shutdown word, then the state, then the bell. */
/* by_ns: the parent's graceful deadline (close_by_ns), 0 for none. */
void worker__mb_send_shutdown(worker__mailbox *mb, int64_t by_ns);

#endif /* WORKER_MAILBOX_H */
