/* SPDX-License-Identifier: MIT */
/*
 * endpoint.c — a child as a dispatch endpoint, from the parent's side: its
 * task ring in the mailbox (wire/mailbox.h), what may enter it, how its
 * completions are collected, what fails when it breaks or dies, how its
 * scheduler wants to hear of it, and its poisoning. Everything here runs
 * with the worker's `mu` held, on the scheduler thread or on a submitter's
 * (dispatch.h): no two threads ever store into one ring.
 *
 * The ring is in order: the parent puts tasks into slots by increasing
 * number and collects them in the same order, and the child serves them
 * in that order too. That is what lets a task enter the ring behind tasks
 * it depends on (its `after` bits), and what makes "the oldest task in
 * flight" the only slot the parent has to look at to collect.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "child/child.h"
#include "dispatch.h"

static int index_of(const worker *w, const struct worker__child *c)
{
    return (int)(c - w->children);
}

static uint64_t oldest_seq(const struct worker__child *c)
{
    return c->seq - c->n_inflight + 1;
}

static unsigned slot_index(uint64_t seq)
{
    return (unsigned)((seq - 1) % WORKER__MB_TASK_SLOTS);
}

/* Make an endpoint unusable. The first reason is kept. A live child is told
   to shut down (sticky word first): it leaves when it can, and close()
   reaps it or SIGKILLs it within its budget. */
void worker__endpoint_poison(worker *w, struct worker__child *c,
                             const char *fmt, ...)
{
    va_list ap;

    (void)w;
    if (c->poisoned)
        return;
    c->poisoned = true;
    va_start(ap, fmt);
    /* va_start is right above: clang-tidy 14's analyzer loses it on some
       paths through the caller. */
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    vsnprintf(c->poison, sizeof(c->poison), fmt, ap);
    va_end(ap);
    if (!c->dead && c->mb)
        worker__mb_send_shutdown(c->mb, 0); /* close() bounds it */
}

bool worker__endpoint_usable(const struct worker__child *c)
{
    return c->cstate == WORKER__C_READY && !c->reaped && c->mb && !c->poisoned;
}

/* Where a blob of len bytes would start in the area (a count, as
   blob_head), if it fits now: after the bytes in use, or at offset 0 when
   it would cross the end of the area. */
static bool blob_fits(const struct worker__child *c, uint32_t len,
                      uint64_t *start)
{
    uint64_t at = c->blob_head, pos = at % WORKER__MB_BLOB_AREA;

    if (len && pos + len > WORKER__MB_BLOB_AREA)
        at += WORKER__MB_BLOB_AREA - pos;
    if (at + len - c->blob_tail > WORKER__MB_BLOB_AREA)
        return false;
    *start = at;
    return true;
}

bool worker__endpoint_has_room(const struct worker__child *c,
                               const struct worker__task *t)
{
    uint64_t start;

    return c->n_inflight < WORKER__MB_TASK_SLOTS &&
           blob_fits(c, t->len, &start);
}

/* The oldest task leaves the ring: its slot and its blob's bytes are free
   again (all of the area once the ring is empty: the next blob starts at
   offset 0, so even the largest fits). */
static struct worker__task *take_oldest(struct worker__child *c)
{
    unsigned i = slot_index(oldest_seq(c));
    struct worker__task *t = c->ring[i];

    c->ring[i] = NULL;
    c->n_inflight--;
    c->blob_tail = c->blob_end[i];
    if (!c->n_inflight)
        c->blob_head = c->blob_tail = 0;
    return t;
}

int worker__endpoint_task_ready(const worker *w, const struct worker__child *c,
                                const struct worker__task *t, uint64_t *after,
                                uint32_t *bad)
{
    return worker__task_ready(t, index_of(w, c), c->seq + 1, after, bad);
}

/* The level a parked scheduler's pass needs (EACH or BATCH). */
static uint32_t listen_base(const worker *w, const struct worker__child *c)
{
    const worker_job *first = NULL;

    if (atomic_load(&w->n_task_waiters) || c->awaited)
        return WORKER__MB_LISTEN_EACH;
    /* A job may end before the batch does only if the ring holds tasks of
       another job after its last one: its waiter (or close's drain) must
       not wait for those. */
    for (uint64_t s = oldest_seq(c); s <= c->seq; s++) {
        const worker_job *job = c->ring[slot_index(s)]->job;
        if (first && job != first)
            return WORKER__MB_LISTEN_EACH;
        first = job;
    }
    return WORKER__MB_LISTEN_BATCH;
}

uint32_t worker__endpoint_listen_level(const worker *w,
                                       const struct worker__child *c)
{
    return listen_base(w, c) |
           (w->n_collectors ? WORKER__MB_LISTEN_WAITERS : 0);
}

void worker__endpoint_fail_ring(worker *w, struct worker__child *c, int rc,
                                const char *first, const char *rest)
{
    const char *msg = first;

    while (c->n_inflight) {
        worker__task_finish(w, take_oldest(c), false, rc, msg);
        msg = rest;
    }
}

bool worker__endpoint_put(worker *w, struct worker__child *c,
                          struct worker__task *t, uint64_t after)
{
    uint64_t seq = c->seq + 1, start = c->blob_head;
    unsigned i = slot_index(seq);
    char pre[64];
    int rc;

    /* The ring's pages, reserved before the first touch (mailbox.h): a
       full /dev/shm fails this task, not the process that touches them. */
    if (!c->mb_ring_had && (rc = worker__mailbox_have_ring(c->mb)) != 0) {
        char m[WORKER_ERROR_MAX];
        worker__child_prefix(w, c, pre, sizeof(pre));
        worker__fmt(m, sizeof(m), "%stask ring could not be reserved: %s", pre,
                    strerror(-rc));
        worker__task_finish(w, t, false, rc, m);
        return false;
    }
    c->mb_ring_had = true;
    worker__mb_slot *slot = worker__mb_slot_of(c->mb, seq);
    uint32_t s = worker__mb_load(&slot->state);

    /* Submit only into an IDLE slot: anything else means the protocol
       broke (a stale or foreign publication), and the endpoint is done. */
    if (s != WORKER__MB_IDLE) {
        worker__child_prefix(w, c, pre, sizeof(pre));
        worker__endpoint_poison(w, c,
                                "%stask slot %u not IDLE at dispatch (state "
                                "%u)",
                                pre, i, s);
        worker__task_finish(w, t, false, -EIO, c->poison);
        worker__endpoint_fail_ring(w, c, -EIO, c->poison, c->poison);
        return false;
    }
    (void)blob_fits(c, t->len, &start); /* the caller checked the room */
    c->seq = seq;
    c->ring[i] = t;
    c->n_inflight++;
    c->blob_head = start + t->len;
    c->blob_end[i] = c->blob_head;
    t->state = WORKER__T_RUNNING;
    t->on = index_of(w, c);
    t->seq = seq;
    slot->seq = seq;
    slot->done_seq = 0;
    slot->result = 0;
    slot->after = after;
    slot->skipped = 0;
    slot->callable = t->callable;
    slot->nkargs = t->nkargs;
    memcpy(slot->kargs, t->kargs, sizeof(slot->kargs));
    slot->len = t->len;
    slot->blob_off = (uint32_t)(start % WORKER__MB_BLOB_AREA);
    if (t->len)
        memcpy(c->mb->blobs + slot->blob_off, t->blob, t->len);
    slot->error = 0;
    slot->msg[0] = '\0';
    /* A submitter dispatching while the scheduler is parked arms `listen`
       itself, before the task is published: the child reads the word only
       after it acquired TASK_READY, so it cannot miss it. The scheduler
       arms it before it parks (sched.c). Its level is only ever raised
       here; the waiters' flag follows whether any waits now. */
    if (w->sched_parked) {
        _Atomic uint32_t *word = &c->mb->frame[0].listen;
        uint32_t was = atomic_load_explicit(word, memory_order_relaxed);
        uint32_t want = worker__endpoint_listen_level(w, c);
        uint32_t level = (was & WORKER__MB_LISTEN_LEVEL) >
                                 (want & WORKER__MB_LISTEN_LEVEL)
                             ? (was & WORKER__MB_LISTEN_LEVEL) |
                                   (want & WORKER__MB_LISTEN_WAITERS)
                             : want;
        if (level != was)
            atomic_store_explicit(word, level, memory_order_relaxed);
    }
    /* The slot and the blob above are ordered before the child's acquire
       of the state by this release store. */
    worker__mb_store(&slot->state, WORKER__MB_TASK_READY);
    return true;
}

void worker__endpoint_wake(struct worker__child *c)
{
    if (worker__mb_wake_parked_child(c->mb))
        c->task_wakeups++;
}

bool worker__endpoint_has_completion(struct worker__child *c)
{
    return c->n_inflight &&
           worker__mb_load(&worker__mb_slot_of(c->mb, oldest_seq(c))->state) ==
               WORKER__MB_TASK_DONE;
}

/* The message of a task the child did not run: the dependency that
   failed (collected before it: it was earlier in the same ring), or the
   shutdown it was leaving on (the poison that sent it, if any). */
static void skipped_message(const worker *w, const struct worker__child *c,
                            const struct worker__task *t, uint32_t why,
                            char *msg, size_t size)
{
    uint32_t bad = WORKER__TASK_NONE;
    char pre[64];

    if (why == WORKER__MB_SKIP_SHUTDOWN) {
        worker__child_prefix(w, c, pre, sizeof(pre));
        if (c->poisoned)
            worker__fmt(msg, size, "%s", c->poison);
        else
            worker__fmt(msg, size,
                        "%stask %u not run: the child was shutting down", pre,
                        t->id);
    } else if (worker__task_ready(t, -1, 0, NULL, &bad) < 0)
        worker__fmt(msg, size, "task %u poisoned: it depends on failed task %u",
                    t->id, bad);
    else
        worker__fmt(msg, size,
                    "task %u skipped by the child: a task it depends on "
                    "failed",
                    t->id);
}

unsigned worker__endpoint_collect(worker *w, struct worker__child *c)
{
    unsigned n = 0;

    while (c->n_inflight) {
        uint64_t seq = oldest_seq(c);
        worker__mb_slot *slot = worker__mb_slot_of(c->mb, seq);
        uint32_t expected = WORKER__MB_TASK_DONE;
        char msg[WORKER_ERROR_MAX], pre[64];
        struct worker__task *t;

        if (worker__mb_load(&slot->state) != WORKER__MB_TASK_DONE)
            break;
        t = take_oldest(c);
        n++;
        if (slot->done_seq != seq) {
            worker__child_prefix(w, c, pre, sizeof(pre));
            worker__endpoint_poison(w, c,
                                    "%sstale TASK_DONE (task %llu, expected "
                                    "%llu)",
                                    pre, (unsigned long long)slot->done_seq,
                                    (unsigned long long)seq);
            worker__task_finish(w, t, false, -EIO, c->poison);
            worker__endpoint_fail_ring(w, c, -EIO, c->poison, c->poison);
            break;
        }
        /* Acquired the state above: the error tuple and result are
           complete. */
        t->result = slot->result;
        if (slot->skipped) {
            skipped_message(w, c, t, slot->skipped, msg, sizeof(msg));
        } else if (slot->error) {
            memcpy(msg, slot->msg, sizeof(msg));
            msg[sizeof(msg) - 1] = '\0';
            if (!msg[0]) {
                worker__child_prefix(w, c, pre, sizeof(pre));
                worker__fmt(msg, sizeof(msg), "%stask failed with code %d", pre,
                            (int)slot->error);
            }
        }
        /* Back to IDLE only from TASK_DONE: the slot is ours again. */
        atomic_compare_exchange_strong(&slot->state, &expected,
                                       WORKER__MB_IDLE);
        worker__task_finish(w, t, slot->error == 0 && !slot->skipped, -EIO,
                            slot->error || slot->skipped ? msg : NULL);
    }
    return n;
}
