/* SPDX-License-Identifier: MIT */
/*
 * sched.c — the scheduler thread and its pass, which a waiter takes
 * itself while the scheduler is parked (dispatch.h).
 *
 * It parks in one epoll set of the kick eventfd, the doorbell eventfd
 * (children ring it when it listens for their completions, wire/mailbox.h)
 * and the exit descriptors of all live children (proc/procfd.c), with the
 * nearest control deadline as the timeout. Nothing polls on a period: an
 * idle tree uses no CPU, and a child that dies mid-task fails its run as
 * soon as its descriptor turns readable. Each pass collects every
 * completion of every ring, then refills the rings from their FIFOs.
 *
 * The set is kept, not rebuilt at each park: a park costs one
 * epoll_wait() whatever the number of children. Both eventfds are in it
 * edge-triggered, so a ring is never read back: each write to an eventfd
 * is a new event (the kernel queues the entry again at every write), one
 * that lands after epoll_wait() returned wakes the next one, and nothing
 * has to drain the count first. The count only grows, by one a ring:
 * 2^64 - 2 rings, where a write would fail, are beyond any process's
 * life.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "child/child.h"
#include "dispatch.h"
#include "faults.h"
#include "proc/proc.h"

/* ---- the scheduler: endpoints (mu held) ---- */

static void ctl_finish(struct worker__child *c, int rc, uint64_t result,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void ctl_finish(struct worker__child *c, int rc, uint64_t result,
                       const char *fmt, ...)
{
    struct worker__ctl *ctl = c->ctl;
    va_list ap;

    ctl->rc = rc;
    ctl->result = result;
    ctl->msg[0] = '\0';
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(ctl->msg, sizeof(ctl->msg), fmt, ap);
        va_end(ap);
    }
    ctl->done = true;
    c->ctl = NULL;
    c->ctl_issued = false;
}

static void issue_ctl(worker *w, struct worker__child *c)
{
    worker__mb_frame *f = &c->mb->frame[0];
    uint32_t s;
    char pre[64];

    worker__child_prefix(w, c, pre, sizeof(pre));
    if (c->poisoned) {
        ctl_finish(c, -EIO, 0, "%s", c->poison);
        return;
    }
    s = worker__mb_load(&f->state);
    if (s != WORKER__MB_IDLE) {
        worker__endpoint_poison(w, c,
                                "%sbase frame not IDLE for control %s (state "
                                "%u)",
                                pre, worker__ctl_name(c->ctl->cmd), s);
        ctl_finish(c, -EIO, 0, "%s", c->poison);
        return;
    }
    f->subcmd = c->ctl->cmd;
    worker__mb_ctl_of(f)->arg = c->ctl->arg;
    worker__mb_ctl_of(f)->result = 0;
    f->error = 0;
    f->msg[0] = '\0';
    worker__mb_store(&f->state, WORKER__MB_CONTROL_REQUEST);
    worker__mb_ring_child(c->mb);
    c->ctl_issued = true;
    c->ctl->issued_ns = worker__now_ns();
}

static bool collect_ctl(worker *w, struct worker__child *c, int64_t now)
{
    worker__mb_frame *f = &c->mb->frame[0];
    uint32_t expected = WORKER__MB_CONTROL_DONE;
    char pre[64];

    worker__child_prefix(w, c, pre, sizeof(pre));
    if (worker__mb_load(&f->state) == WORKER__MB_CONTROL_DONE) {
        char m[WORKER_ERROR_MAX];
        int32_t err = f->error;
        uint64_t result = worker__mb_ctl_of(f)->result;

        memcpy(m, f->msg, sizeof(m));
        m[sizeof(m) - 1] = '\0';
        atomic_compare_exchange_strong(&f->state, &expected, WORKER__MB_IDLE);
        if (err)
            ctl_finish(c, -EIO, 0, "%scontrol %s failed on child: %s", pre,
                       worker__ctl_name(c->ctl->cmd),
                       m[0] ? m : "(no message)");
        else
            ctl_finish(c, 0, result, NULL);
        return true;
    }
    if (c->ctl->deadline_ns && now >= c->ctl->deadline_ns) {
        /* No reply in time: the command may still be running in the child,
           so the base frame is not ours to reuse. Poison (sticky). */
        char note[96];
        worker__fault_note(c->mb, note, sizeof(note));
        worker__endpoint_poison(w, c, "%scontrol %s timed out after %.3f s%s",
                                pre, worker__ctl_name(c->ctl->cmd),
                                (double)(now - c->ctl->issued_ns) / 1e9, note);
        ctl_finish(c, -ETIMEDOUT, 0, "%s", c->poison);
        return true;
    }
    return false;
}

/* The child exited (peeked, not reaped): fail what it owned. What it
   completed before it died is collected first: those results are whole. */
static void mark_dead(worker *w, struct worker__child *c, int status)
{
    char st[160], pre[64], note[96];

    worker__endpoint_collect(w, c);
    c->dead = true;
    c->wait_status = status;
    worker__describe_status(status, st, sizeof(st));
    worker__fault_note(c->mb, note, sizeof(note));
    strncat(st, note, sizeof(st) - strlen(st) - 1);
    worker__child_prefix(w, c, pre, sizeof(pre));
    if (c->n_inflight) {
        char during[WORKER_ERROR_MAX], before[WORKER_ERROR_MAX];

        /* The ring is served in order: the oldest task was running (or
           about to), the others never started. */
        worker__fmt(during, sizeof(during),
                    "%schild process pid %d died during a task (%s)", pre,
                    (int)c->pid, st);
        worker__fmt(before, sizeof(before),
                    "%schild process pid %d died before the task ran (%s)", pre,
                    (int)c->pid, st);
        worker__endpoint_fail_ring(w, c, -EIO, during, before);
    }
    if (c->ctl && c->ctl_issued)
        ctl_finish(c, -EIO, 0,
                   "%schild process pid %d died during control %s (%s)", pre,
                   (int)c->pid, worker__ctl_name(c->ctl->cmd), st);
    worker__endpoint_poison(w, c, "%schild process pid %d is gone (%s)", pre,
                            (int)c->pid, st);
}

/* Move tasks from c's FIFO into its ring while there is room and the head
   may go (its dependencies done, or earlier in this ring); then wake the
   child once if it is parked. A poisoned endpoint's FIFO fails, once
   nothing is in flight (in order, as the tasks would have run). */
static void pump_endpoint(worker *w, struct worker__child *c)
{
    unsigned put = 0;

    while (c->q_head) {
        struct worker__task *t = c->q_head;
        uint32_t bad = WORKER__TASK_NONE;
        uint64_t after = 0;
        int r;

        if (c->poisoned) {
            if (c->n_inflight)
                break;
            c->q_head = t->qnext;
            worker__task_finish(w, t, false, -EIO, c->poison);
            continue;
        }
        if (!worker__endpoint_has_room(c, t))
            break;
        r = worker__endpoint_task_ready(w, c, t, &after, &bad);
        if (r == 0)
            break;
        c->q_head = t->qnext;
        if (r < 0) {
            char m[WORKER_ERROR_MAX];
            worker__fmt(m, sizeof(m),
                        "task %u poisoned: it depends on failed task %u", t->id,
                        bad);
            worker__task_finish(w, t, false, -EIO, m);
            continue;
        }
        if (worker__endpoint_put(w, c, t, after))
            put++;
    }
    if (!c->q_head)
        c->q_tail = NULL;
    if (put && !c->poisoned)
        worker__endpoint_wake(c);
}

/* See dispatch.h. The same checks as the scheduler's pass (progress():
   a READY, live, unpoisoned endpoint) and the same pump. */
bool worker__dispatch_direct(worker *w, struct worker__child *c)
{
    uint64_t finished = w->tasks_finished, after;
    uint32_t bad = WORKER__TASK_NONE;

    if (!w->sched_running || w->sched_stop || !worker__endpoint_usable(c))
        return false;
    pump_endpoint(w, c);
    if (w->tasks_finished != finished) {
        /* Tasks failed here (a poisoned dependency, a slot not IDLE): their
           waiters learn it now; the scheduler, at its kick, re-pumps what
           they may have unblocked elsewhere. */
        worker__notify(w);
        return false;
    }
    /* A ring whose next task waits for nothing but room in it: the
       child's completions wake the scheduler (it listens while parked). */
    return !c->q_head ||
           (c->n_inflight && !worker__endpoint_has_room(c, c->q_head) &&
            worker__endpoint_task_ready(w, c, c->q_head, &after, &bad) == 1);
}

/* WORKER_ANY sub tasks go to any idle sub whose own FIFO is empty. */
static void pump_any(worker *w)
{
    struct worker__task **link = &w->anyq_head, *t, *last = NULL;

    while ((t = *link) != NULL) {
        struct worker__child *idle = NULL;
        bool any_live = false, drop = false;
        char m[WORKER_ERROR_MAX];
        uint32_t bad = WORKER__TASK_NONE;
        int r;

        for (size_t i = 0; i < w->n_children; i++) {
            struct worker__child *c = &w->children[i];
            if (c->kind != WORKER_CHILD_SUB || !worker__endpoint_usable(c))
                continue;
            any_live = true;
            if (!c->n_inflight && !c->q_head) {
                idle = c;
                break;
            }
        }
        if (!any_live) {
            worker__fmt(m, sizeof(m),
                        "sub_worker: no live sub worker for task %u", t->id);
            drop = true;
        } else if ((r = worker__task_ready(t, -1, 0, NULL, &bad)) < 0) {
            worker__fmt(m, sizeof(m),
                        "task %u poisoned: it depends on failed task %u", t->id,
                        bad);
            drop = true;
        } else if (r == 0) {
            last = t; /* not ready: later ones may be (no order among ANY) */
            link = &t->qnext;
            continue;
        } else if (!idle) {
            break;
        }
        /* Unlink t; keep the tail exact in O(1). */
        *link = t->qnext;
        if (w->anyq_tail == t)
            w->anyq_tail = last;
        t->qnext = NULL;
        if (drop) {
            worker__task_finish(w, t, false, -EIO, m);
        } else if (worker__endpoint_put(w, idle, t, 0)) {
            worker__endpoint_wake(idle);
        }
    }
}

/* Collect every completion (with `controls`, the control commands too:
   the scheduler's pass), then dispatch. Returns true if a waiter should
   wake. */
static bool progress(worker *w, int64_t now, bool controls)
{
    bool wake = false;
    uint32_t pending_before = w->jobs_pending;
    uint64_t finished;

    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];

        if (c->cstate != WORKER__C_READY || c->reaped || !c->mb)
            continue;
        /* A task completion wakes only task waiters; job waiters wake
           when their job is done (jobs_pending changes below). */
        if (c->n_inflight && worker__endpoint_collect(w, c) &&
            atomic_load(&w->n_task_waiters))
            wake = true;
        if (!controls)
            continue;
        if (c->ctl && c->ctl_issued && collect_ctl(w, c, now))
            wake = true;
        if (c->ctl && !c->ctl_issued) {
            issue_ctl(w, c);
            if (c->ctl == NULL)
                wake = true;
        }
    }
    /* Pumping finishes poisoned tasks, which can make a task at the head
       of a target already pumped in this pass dispatchable (or poisoned):
       repeat until a pass finishes nothing, so no decision waits for a
       wake-up that will never come. */
    do {
        finished = w->tasks_finished;
        for (size_t i = 0; i < w->n_children; i++) {
            struct worker__child *c = &w->children[i];
            if (c->cstate == WORKER__C_READY && !c->reaped && c->mb)
                pump_endpoint(w, c);
        }
        if (w->anyq_head)
            pump_any(w);
    } while (w->tasks_finished != finished);
    if (w->jobs_pending != pending_before)
        wake = true;
    return wake;
}

/* What an event of the set names: an eventfd, or the child of an index. */
enum { WATCH_KICK, WATCH_DOORBELL, WATCH_CHILD };

/* A child the set holds the exit descriptor of: READY, not seen dead,
   not reaped. */
static bool watchable(const struct worker__child *c)
{
    return c->cstate == WORKER__C_READY && !c->reaped && !c->dead &&
           c->pidfd >= 0;
}

/* Keep the set in step with the children: a child seen dead or reaped
   leaves it (the set was filled at the start, when the epoch's every
   child was READY: fill_set()). */
static void unwatch_gone(worker *w)
{
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];

        if (c->watched && !watchable(c)) {
            if (c->pidfd >= 0)
                epoll_ctl(w->sched_epfd, EPOLL_CTL_DEL, c->pidfd, NULL);
            c->watched = false;
        }
    }
}

/* The nearest deadline of a control request issued to a watched child
   (0: none): the park ends there, so that collect_ctl() can time it out. */
static int64_t next_ctl_deadline(const worker *w)
{
    int64_t wake_at = 0;

    for (size_t i = 0; i < w->n_children; i++) {
        const struct worker__child *c = &w->children[i];

        if (c->watched && c->ctl && c->ctl_issued && c->ctl->deadline_ns &&
            (!wake_at || c->ctl->deadline_ns < wake_at))
            wake_at = c->ctl->deadline_ns;
    }
    return wake_at;
}

/* Close the set: every child leaves it with it. */
static void unwatch_all(worker *w)
{
    if (w->sched_epfd >= 0)
        close(w->sched_epfd);
    w->sched_epfd = -1;
    for (size_t i = 0; i < w->n_children; i++)
        w->children[i].watched = false;
}

/* Park until an event of the set or the deadline (0: none), rounded up to
   the next millisecond. Returns how many events (EINTR: none). */
static int park(worker *w, struct epoll_event *ev, int max, int64_t wake_at)
{
    int ms = -1;

    if (wake_at) {
        int64_t left = wake_at - worker__now_ns();
        int64_t left_ms = left > 0 ? (left + 999999) / 1000000 : 0;
        ms = left_ms > INT_MAX ? INT_MAX : (int)left_ms;
    }
    return epoll_wait(w->sched_epfd, ev, max, ms);
}

/* The word shares its cache line with those the child reads on every
   pass: store only a change. */
static void set_listen(struct worker__child *c, uint32_t level)
{
    _Atomic uint32_t *word = &c->mb->frame[0].listen;

    if (atomic_load_explicit(word, memory_order_relaxed) != level)
        atomic_store_explicit(word, level, memory_order_relaxed);
}

/* Before parking: arm `listen` in the mailbox of every child with tasks
   in flight, at the level its waiters need, then look at their oldest
   slots again (wire/mailbox.h: arm, fence, look, against the child's
   publish, fence, read). True if a completion is already there: do not
   park, take another pass. */
static bool listen_before_parking(worker *w)
{
    bool ready = false;

    for (size_t i = 0; i < w->n_children; i++)
        w->children[i].awaited = false;
    for (size_t i = 0; i < w->n_children; i++)
        if (w->children[i].q_head)
            worker__task_mark_awaited(w, w->children[i].q_head);
    for (struct worker__task *t = w->anyq_head; t; t = t->qnext)
        worker__task_mark_awaited(w, t);
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->n_inflight && c->mb)
            set_listen(c, worker__endpoint_listen_level(w, c));
    }
    atomic_thread_fence(memory_order_seq_cst);
    for (size_t i = 0; i < w->n_children && !ready; i++) {
        struct worker__child *c = &w->children[i];
        if (c->n_inflight && c->mb && worker__endpoint_has_completion(c))
            ready = true;
    }
    return ready;
}

/* Awake again: children need not ring. The fence orders these stores
   before the collection that follows, against a child that read `listen`
   before them and so counts on us to look (wire/mailbox.h). */
static void stop_listening(worker *w)
{
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->mb)
            set_listen(c, WORKER__MB_LISTEN_OFF);
    }
    atomic_thread_fence(memory_order_seq_cst);
}

/* See dispatch.h. Collect and dispatch until an arm-fence-look of every
   ring in flight finds no completion: the rings are armed then, as the
   parked scheduler needs them (with the waiters' flag while any waits). */
bool worker__waiter_pass(worker *w)
{
    bool finished = false;

    if (!w->sched_running || w->sched_stop || !w->sched_parked)
        return false;
    for (;;) {
        finished |= progress(w, 0, false);
        if (!listen_before_parking(w))
            return finished;
        stop_listening(w);
    }
}

/* Wait (mu not held) until pred (evaluated under mu) holds or the deadline
   (0: none). 0 or -ETIMEDOUT. While the scheduler is parked, the waiter
   takes its pass itself (dispatch.h, "Waiting"). On one CPU it yields
   once before it parks, as an idle child does (child.c): the child it
   waits for runs then, and neither side sleeps. */
int worker__wait_for(worker *w, worker__pred_fn pred, void *arg,
                     int64_t deadline_ns)
{
    struct worker__wake *k = w->wake;
    bool finished, yielded = false;
    int rc;

    pthread_mutex_lock(&w->mu);
    w->n_collectors++;
    for (;;) {
        /* Sampled before the pass arms `listen`: a child that completes
           a task after the pass looked moves the word, and the wait
           below returns at once. */
        uint32_t seq = atomic_load(&k->progress);

        finished = worker__waiter_pass(w);
        if (pred(w, arg)) {
            rc = 0;
            break;
        }
        if (deadline_ns && worker__now_ns() >= deadline_ns) {
            rc = -ETIMEDOUT;
            break;
        }
        pthread_mutex_unlock(&w->mu);
        if (finished)
            worker__notify(w);
        if (w->one_cpu && !yielded) {
            sched_yield();
            yielded = true;
        } else {
            /* Counted before the futex compares the word: whoever bumps
               it after reads the count after the bump (dispatch.h). */
            atomic_fetch_add(&k->n_waiters, 1);
            worker__futex_wait(&k->progress, seq, deadline_ns);
            atomic_fetch_sub(&k->n_waiters, 1);
        }
        pthread_mutex_lock(&w->mu);
    }
    /* The last waiter leaves the completions to the scheduler again (the
       pass arms `listen` for it alone). */
    if (--w->n_collectors == 0)
        finished |= worker__waiter_pass(w);
    pthread_mutex_unlock(&w->mu);
    if (finished)
        worker__notify(w);
    return rc;
}

/* The exit descriptors among the n events of the set: each child that has
   exited is marked dead (mu held). A kick or a ring needs nothing here:
   the pass that follows looks at every ring. */
static void note_exits(worker *w, const struct epoll_event *ev, int n)
{
    for (int i = 0; i < n; i++) {
        struct worker__child *c;
        int status;

        if (ev[i].data.u64 < WATCH_CHILD)
            continue;
        c = &w->children[ev[i].data.u64 - WATCH_CHILD];
        if (c->watched && !c->dead && worker__child_exited(c, &status)) {
            mark_dead(w, c, status);
            worker__notify(w);
        }
    }
}

/* Exits that happened while no scheduler thread watched (mu held): one
   look at the set, without waiting, and every child found gone is marked
   dead, as a running scheduler would have marked it when it died. */
static void look_for_exits(worker *w)
{
    struct epoll_event ev[2 + WORKER_MAX_CHILDREN];
    int n = epoll_wait(w->sched_epfd, ev, (int)(sizeof(ev) / sizeof(ev[0])), 0);

    note_exits(w, ev, n);
}

static void *sched_main(void *arg)
{
    worker *w = arg;
    struct epoll_event ev[2 + WORKER_MAX_CHILDREN];

    /* Waiters are woken once `mu` is released: a waiter woken while the
       scheduler holds it would only block on it (pred() is evaluated
       under mu) and be woken a second time. The progress word moves
       after the change it announces all the same (worker__wait_for). */
    bool owed_notify = false;

    pthread_mutex_lock(&w->mu);
    while (!w->sched_stop) {
        int64_t wake_at;
        int n;

        owed_notify |= progress(w, worker__now_ns(), true);
        unwatch_gone(w);
        wake_at = next_ctl_deadline(w);
        if (listen_before_parking(w)) {
            stop_listening(w);
            if (owed_notify) { /* a stream of completions: wake them now */
                pthread_mutex_unlock(&w->mu);
                worker__notify(w);
                owed_notify = false;
                pthread_mutex_lock(&w->mu);
            }
            continue;
        }
        w->sched_parked = true;
        pthread_mutex_unlock(&w->mu);
        if (owed_notify) {
            worker__notify(w);
            owed_notify = false;
        }

        n = park(w, ev, (int)(sizeof(ev) / sizeof(ev[0])), wake_at);

        pthread_mutex_lock(&w->mu);
        w->sched_parked = false;
        stop_listening(w);
        note_exits(w, ev, n);
    }
    pthread_mutex_unlock(&w->mu);
    if (owed_notify)
        worker__notify(w);
    return NULL;
}

/* ---- scheduler lifecycle ---- */

int worker__dispatch_init(worker *w)
{
    void *page;
    int rc;

    w->kick_fd = -1;
    w->sched_epfd = -1;
    page = mmap(NULL, sizeof(*w->wake), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return -errno;
    w->wake = page;
    if ((rc = pthread_mutex_init(&w->mu, NULL)))
        return -rc;
    w->mu_ready = true;
    return 0;
}

void worker__dispatch_destroy(worker *w)
{
    if (w->kick_fd >= 0)
        close(w->kick_fd);
    w->kick_fd = -1;
    unwatch_all(w);
    if (w->mu_ready)
        pthread_mutex_destroy(&w->mu);
    w->mu_ready = false;
    if (w->wake)
        munmap(w->wake, sizeof(*w->wake));
    w->wake = NULL;
}

/* The scheduler's epoll set: both eventfds, edge-triggered (the head of
   this file), and the exit descriptor of every child, all READY now (the
   epoch's last fork is done). A descriptor the set refuses (no memory,
   the user's limit of epoll watches) fails the start, as a scheduler
   that could not see a child die would hang its runs. 0 or -errno, the
   error set. */
static int fill_set(worker *w)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLET,
                              .data.u64 = WATCH_KICK };
    int rc;

    w->sched_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->sched_epfd < 0 ||
        epoll_ctl(w->sched_epfd, EPOLL_CTL_ADD, w->kick_fd, &ev) != 0)
        goto fail;
    ev.data.u64 = WATCH_DOORBELL;
    if (w->doorbell_fd >= 0 &&
        epoll_ctl(w->sched_epfd, EPOLL_CTL_ADD, w->doorbell_fd, &ev) != 0)
        goto fail;
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];

        if (!watchable(c))
            continue;
        ev.events = EPOLLIN;
        ev.data.u64 = WATCH_CHILD + i;
        if (epoll_ctl(w->sched_epfd, EPOLL_CTL_ADD, c->pidfd, &ev) != 0)
            goto fail;
        c->watched = true;
    }
    return 0;

fail:
    rc = -errno;
    worker__set_error(w, "scheduler's epoll set: %s", strerror(-rc));
    unwatch_all(w);
    return rc;
}

int worker__sched_open(worker *w)
{
    int rc;

    if ((rc = worker__eventfd(w, &w->kick_fd)))
        return rc;
    if ((rc = fill_set(w))) {
        close(w->kick_fd);
        w->kick_fd = -1;
        return rc;
    }
    w->sched_stop = false;
    w->sched_parked = false;
    w->sched_running = true;
    return 0;
}

int worker__sched_start(worker *w)
{
    sigset_t all, old;
    int rc = 0;

    /* Every run, control and device call comes here: once the thread
       runs, one load, not the lock. */
    if (atomic_load_explicit(&w->sched_thread, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&w->mu);
    if (!w->sched_running || w->sched_stop || atomic_load(&w->sched_thread))
        goto out; /* closed (the caller's next step says so), or running */
    /* What died while the tree was idle is known before the first task is
       queued: a run that names a dead child fails at once, as it would
       have with a scheduler watching since READY. */
    look_for_exits(w);
    /* The thread is born with every signal blocked: handlers (the child's
       SIGTERM/SIGHUP, the fixture's budget signal) run on other threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&w->sched, NULL, sched_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        worker__set_error(w, "scheduler thread: %s", strerror(rc));
        rc = -rc;
        goto out;
    }
    atomic_store_explicit(&w->sched_thread, true, memory_order_release);
out:
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static void fail_queue(worker *w, struct worker__task **head,
                       struct worker__task **tail, const char *msg)
{
    while (*head) {
        struct worker__task *t = *head;
        *head = t->qnext;
        worker__task_finish(w, t, false, -ESHUTDOWN, msg);
    }
    *tail = NULL;
}

void worker__sched_stop(worker *w, bool abandon)
{
    bool thread;

    if (!w->mu_ready)
        return;
    pthread_mutex_lock(&w->mu);
    w->sched_stop = true; /* no thread starts from here on */
    thread = atomic_load(&w->sched_thread);
    if (thread) {
        uint64_t one = 1;
        ssize_t n = write(w->kick_fd, &one, sizeof(one));

        (void)n;
    }
    pthread_mutex_unlock(&w->mu);
    if (thread)
        pthread_join(w->sched, NULL);

    pthread_mutex_lock(&w->mu);
    /* A tree never run has had no thread to watch it: the teardown's
       report names a child that died meanwhile as the scheduler would
       have (exited, not left after SHUTDOWN). */
    if (w->sched_running && !thread)
        look_for_exits(w);
    w->sched_running = false;
    atomic_store(&w->sched_thread, false);
    w->sched_parked = false;
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->ctl)
            ctl_finish(c, -ESHUTDOWN, 0,
                       "worker closed while the control "
                       "command was in flight");
        if (!abandon)
            continue;
        worker__endpoint_fail_ring(w, c, -ESHUTDOWN,
                                   "worker closed with the task in flight",
                                   "worker closed with the task in flight");
        fail_queue(w, &c->q_head, &c->q_tail,
                   "worker closed before the task ran");
    }
    if (abandon)
        fail_queue(w, &w->anyq_head, &w->anyq_tail,
                   "worker closed before the task ran");
    pthread_mutex_unlock(&w->mu);
    worker__notify(w);
    if (w->kick_fd >= 0)
        close(w->kick_fd);
    w->kick_fd = -1;
    unwatch_all(w);
}

static bool drained(worker *w, void *arg)
{
    (void)arg;
    return w->ops == 0 && w->jobs_pending == 0;
}

int worker__dispatch_drain(worker *w, int64_t deadline_ns, char *msg,
                           size_t msg_size)
{
    unsigned tasks = 0, jobs = 0, ops;

    if (worker__wait_for(w, drained, NULL, deadline_ns) == 0)
        return 0;
    pthread_mutex_lock(&w->mu);
    ops = w->ops;
    for (worker_job *j = w->jobs; j; j = j->next)
        if (!j->done) {
            jobs++;
            tasks += j->n_tasks - j->n_done;
        }
    pthread_mutex_unlock(&w->mu);
    worker__fmt(msg, msg_size,
                "%u run(s) still in flight (%u orchestration "
                "function(s) running, %u task(s) not done)",
                jobs, ops, tasks);
    return -ETIMEDOUT;
}

void worker__jobs_free(worker *w)
{
    if (!w->mu_ready)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->jobs) {
        worker_job *j = w->jobs;
        worker__job_unlink(w, j);
        worker__job_free_now(j);
    }
    w->jobs_pending = 0;
    pthread_mutex_unlock(&w->mu);
}
