/* SPDX-License-Identifier: MIT */
/*
 * dispatch.c — runs, tasks, the scheduler thread and control commands.
 *
 * Threads and ownership. An orchestration function runs on its caller's
 * thread and only enqueues: under the worker's `mu` it appends tasks to
 * the FIFO of their target (or to the WORKER_ANY queue) and kicks the
 * scheduler if it is parked. The scheduler thread is the single progress
 * owner: it alone stores TASK_READY / CONTROL_REQUEST into a child's
 * mailbox and collects TASK_DONE / CONTROL_DONE, so no two threads ever
 * write one frame. It never reaps (close() does, after joining it): a
 * child's death is peeked with WNOWAIT, so its wait status is known at once
 * and the zombie still pins its pid and process group until close().
 *
 * Waiting. Whoever waits (worker_wait, worker_task_wait, a control caller,
 * close's drain) parks on the `progress` futex word, which the scheduler
 * bumps after completions; a waiter counts itself in n_waiters before it
 * samples the word, and the scheduler reads n_waiters after the bump, so a
 * wake-up is never lost and no syscall is made when nobody waits.
 *
 * The scheduler itself parks in one ppoll() over the kick eventfd, the
 * doorbell eventfd (children ring it after every DONE they publish) and the
 * pidfds of all live children, with the nearest control deadline as the
 * timeout. Nothing polls on a period: an idle tree uses no CPU, and a child
 * that dies mid-task fails its run as soon as its pidfd turns readable.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "device.h"
#include "internal.h"

#define NONE UINT32_MAX
#define CHUNK 256u

enum tstate { T_QUEUED = 0, T_RUNNING, T_DONE, T_FAILED };

struct worker__task {
    worker_job *job;
    uint32_t id;
    uint8_t state;
    worker_child_kind kind;
    int ep;                    /* index in w->children; -1: WORKER_ANY */
    uint32_t callable;
    uint32_t nkargs;
    uint64_t kargs[WORKER__MB_KARGS];
    uint32_t len;
    uint8_t *blob;
    uint32_t prev;             /* previous task of the job on this target */
    uint32_t ndeps;
    uint32_t *deps;
    uint64_t result;
    struct worker__task *qnext;
};

struct worker_job {
    worker *w;
    const void *args;          /* next-level task's blob (in a child) */
    size_t args_len;
    struct worker__task **chunks;
    uint32_t n_tasks, n_chunks, cap_chunks;
    uint32_t n_done;
    bool open;                 /* its orchestration function is running */
    bool done;                 /* !open and every task terminal */
    bool detached;             /* freed by whoever sees it done */
    bool failed;
    int err_rc;
    char error[WORKER_ERROR_MAX];      /* the first error */
    char orch_error[WORKER_ERROR_MAX]; /* worker_job_fail() */
    uint32_t last_on[WORKER_MAX_CHILDREN];
    struct worker_job *next, *prev;
};

struct worker__ctl {
    unsigned cmd;
    uint64_t arg;
    int64_t deadline_ns;       /* 0: none */
    int64_t issued_ns;
    bool done;
    int rc;
    uint64_t result;
    char msg[WORKER_ERROR_MAX];
};

/* The job whose orchestration function runs on this thread, if any. */
static _Thread_local worker_job *current_job;

/* ---- small helpers ---- */

static const char *ctl_name(unsigned cmd)
{
    switch (cmd) {
    case WORKER_CONTROL_PING: return "ping";
    case WORKER__CTRL_DEV_ALLOC: return "device_alloc";
    case WORKER__CTRL_DEV_FREE: return "device_free";
    case WORKER_CONTROL_DEVICE_REGIONS: return "device_regions";
    }
    return "?";
}

void worker__child_prefix(const worker *w, const struct worker__child *c,
                          char *buf, size_t size)
{
    switch (c->kind) {
    case WORKER_CHILD_SUB:
        worker__fmt(buf, size, "sub_worker: ");
        break;
    case WORKER_CHILD_CHIP:
        worker__fmt(buf, size, "chip dev=%u: ", c->index);
        break;
    case WORKER_CHILD_NEXT:
        worker__fmt(buf, size, "child_worker level=%d: ",
                    c->nested ? c->nested->opt.level : w->opt.level - 1);
        break;
    }
}

struct worker__child *worker__find_child(worker *w, worker_child_kind kind,
                                         unsigned index)
{
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->kind == kind && c->index == index && c->cstate != WORKER__C_EMPTY)
            return c;
    }
    return NULL;
}

static int check_timeout(double t)
{
    if (t == WORKER_WAIT_FOREVER)
        return 0;
    if (isnan(t) || isinf(t) || t < 0)
        return -EINVAL;
    return 0;
}

static int64_t deadline_of(double t)
{
    if (t == WORKER_WAIT_FOREVER)
        return 0;
    int64_t d = worker__now_ns() + worker__s_to_ns(t);
    return d ? d : 1; /* 0 means "none" */
}

static struct worker__task *task_at(const worker_job *job, uint32_t id)
{
    return &job->chunks[id / CHUNK][id % CHUNK];
}

/* ---- wake-ups ---- */

/* Bump the progress word and wake whoever waits (mu held or not). */
static void notify(worker *w)
{
    atomic_fetch_add(&w->progress, 1);
    if (atomic_load(&w->n_waiters))
        worker__futex_wake(&w->progress, INT_MAX);
    if (w->wake_also) {
        atomic_fetch_add(w->wake_also, 1);
        worker__futex_wake(w->wake_also, INT_MAX);
    }
}

typedef bool (*pred_fn)(worker *w, void *arg);

/* Wait (mu not held) until pred (evaluated under mu) holds or the deadline
   (0: none). 0 or -ETIMEDOUT. */
static int wait_for(worker *w, pred_fn pred, void *arg, int64_t deadline_ns)
{
    int rc = 0;

    atomic_fetch_add(&w->n_waiters, 1);
    for (;;) {
        uint32_t seq = atomic_load(&w->progress);
        bool ok;

        pthread_mutex_lock(&w->mu);
        ok = pred(w, arg);
        pthread_mutex_unlock(&w->mu);
        if (ok)
            break;
        if (deadline_ns && worker__now_ns() >= deadline_ns) {
            rc = -ETIMEDOUT;
            break;
        }
        worker__futex_wait(&w->progress, seq, deadline_ns);
    }
    atomic_fetch_sub(&w->n_waiters, 1);
    return rc;
}

static void kick(worker *w)
{
    uint64_t one = 1;

    /* mu held: a parked scheduler has published sched_parked under mu
       before its ppoll, so this write cannot be missed. */
    if (w->sched_parked && w->kick_fd >= 0) {
        ssize_t n = write(w->kick_fd, &one, sizeof(one));
        (void)n;
    }
}

/* ---- jobs (mu held unless noted) ---- */

static void job_free_now(worker_job *job)
{
    for (uint32_t i = 0; i < job->n_tasks; i++) {
        struct worker__task *t = task_at(job, i);
        free(t->blob);
        free(t->deps);
    }
    for (uint32_t i = 0; i < job->n_chunks; i++)
        free(job->chunks[i]);
    free(job->chunks);
    free(job);
}

static void job_unlink(worker *w, worker_job *job)
{
    if (job->prev)
        job->prev->next = job->next;
    else
        w->jobs = job->next;
    if (job->next)
        job->next->prev = job->prev;
}

/* Mark the job done when its function returned and every task is
   terminal; a detached job is freed here. Returns true if it became done. */
static bool job_check_done(worker *w, worker_job *job)
{
    if (job->done || job->open || job->n_done != job->n_tasks)
        return false;
    job->done = true;
    w->jobs_pending--;
    if (job->detached) {
        job_unlink(w, job);
        job_free_now(job);
    }
    return true;
}

/* A task reached a terminal state. First error wins per job. */
static void task_finish(worker *w, struct worker__task *t, bool ok, int rc,
                        const char *msg)
{
    worker_job *job = t->job;

    t->state = ok ? T_DONE : T_FAILED;
    job->n_done++;
    w->tasks_finished++;
    if (!ok && !job->failed) {
        job->failed = true;
        job->err_rc = rc;
        worker__fmt(job->error, sizeof(job->error), "%s", msg);
    }
    job_check_done(w, job);
}

/* 1: every dependency done; 0: some still pending; -1: one failed (*bad
   gets its id). */
static int task_ready(const struct worker__task *t, uint32_t *bad)
{
    const worker_job *job = t->job;
    int r = 1;

    if (t->prev != NONE) {
        uint8_t s = task_at(job, t->prev)->state;
        if (s == T_FAILED) {
            *bad = t->prev;
            return -1;
        }
        if (s != T_DONE)
            r = 0;
    }
    for (uint32_t i = 0; i < t->ndeps; i++) {
        uint8_t s = task_at(job, t->deps[i])->state;
        if (s == T_FAILED) {
            *bad = t->deps[i];
            return -1;
        }
        if (s != T_DONE)
            r = 0;
    }
    return r;
}

/* ---- the scheduler: endpoints (mu held) ---- */

static void poison(worker *w, struct worker__child *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Make an endpoint unusable. The first reason is kept. A live child is told
   to shut down (sticky word first): it leaves when it can, and close()
   reaps it or SIGKILLs it within its budget. */
static void poison(worker *w, struct worker__child *c, const char *fmt, ...)
{
    va_list ap;

    (void)w;
    if (c->poisoned)
        return;
    c->poisoned = true;
    va_start(ap, fmt);
    vsnprintf(c->poison, sizeof(c->poison), fmt, ap);
    va_end(ap);
    if (!c->dead && c->mb)
        worker__mb_send_shutdown(c->mb);
}

static void ctl_finish(struct worker__child *c, int rc, uint64_t result,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

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

static void dispatch(worker *w, struct worker__child *c, struct worker__task *t)
{
    worker__mb_frame *f = &c->mb->frame[1];
    worker__mb_task *tk = worker__mb_task_of(f);
    uint32_t s = worker__mb_load(&f->state);
    char pre[64];

    /* Submit only into an IDLE frame: anything else means the protocol
       broke (a stale or foreign publication), and the endpoint is done. */
    if (s != WORKER__MB_IDLE) {
        worker__child_prefix(w, c, pre, sizeof(pre));
        poison(w, c, "%stask frame not IDLE at dispatch (state %u)", pre, s);
        task_finish(w, t, false, -EIO, c->poison);
        return;
    }
    tk->seq = ++c->seq;
    tk->done_seq = 0;
    tk->result = 0;
    tk->nkargs = t->nkargs;
    memcpy(tk->kargs, t->kargs, sizeof(tk->kargs));
    tk->len = t->len;
    if (t->len)
        memcpy(tk->blob, t->blob, t->len);
    f->subcmd = t->callable;
    f->error = 0;
    f->msg[0] = '\0';
    /* The payload above is ordered before the child's acquire of the state
       by this release store. */
    worker__mb_store(&f->state, WORKER__MB_TASK_READY);
    worker__mb_ring_child(c->mb);
    c->inflight = t;
    t->state = T_RUNNING;
}

static bool collect(worker *w, struct worker__child *c)
{
    worker__mb_frame *f = &c->mb->frame[1];
    worker__mb_task *tk = worker__mb_task_of(f);
    struct worker__task *t = c->inflight;
    char msg[WORKER_ERROR_MAX], pre[64];
    uint32_t expected = WORKER__MB_TASK_DONE;

    if (worker__mb_load(&f->state) != WORKER__MB_TASK_DONE)
        return false;
    c->inflight = NULL;
    if (tk->done_seq != c->seq) {
        worker__child_prefix(w, c, pre, sizeof(pre));
        poison(w, c, "%sstale TASK_DONE (task %llu, expected %llu)", pre,
               (unsigned long long)tk->done_seq, (unsigned long long)c->seq);
        task_finish(w, t, false, -EIO, c->poison);
        return true;
    }
    /* Acquired the state above: the error tuple and result are complete. */
    t->result = tk->result;
    if (f->error) {
        memcpy(msg, f->msg, sizeof(msg));
        msg[sizeof(msg) - 1] = '\0';
        if (!msg[0]) {
            worker__child_prefix(w, c, pre, sizeof(pre));
            worker__fmt(msg, sizeof(msg), "%stask failed with code %d", pre,
                        (int)f->error);
        }
    }
    /* Back to IDLE only from TASK_DONE: never over a SHUTDOWN. */
    atomic_compare_exchange_strong(&f->state, &expected, WORKER__MB_IDLE);
    task_finish(w, t, f->error == 0, -EIO, f->error ? msg : NULL);
    return true;
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
        poison(w, c, "%sbase frame not IDLE for control %s (state %u)", pre,
               ctl_name(c->ctl->cmd), s);
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
                       ctl_name(c->ctl->cmd), m[0] ? m : "(no message)");
        else
            ctl_finish(c, 0, result, NULL);
        return true;
    }
    if (c->ctl->deadline_ns && now >= c->ctl->deadline_ns) {
        /* No reply in time: the command may still be running in the child,
           so the base frame is not ours to reuse. Poison (sticky). */
        char note[96];
        worker__fault_note(c->mb, note, sizeof(note));
        poison(w, c, "%scontrol %s timed out after %.3f s%s", pre,
               ctl_name(c->ctl->cmd),
               (double)(now - c->ctl->issued_ns) / 1e9, note);
        ctl_finish(c, -ETIMEDOUT, 0, "%s", c->poison);
        return true;
    }
    return false;
}

/* The child exited (peeked, not reaped): fail what it owned. */
static void mark_dead(worker *w, struct worker__child *c, int status)
{
    char st[160], pre[64], note[96];

    c->dead = true;
    c->wait_status = status;
    worker__describe_status(status, st, sizeof(st));
    worker__fault_note(c->mb, note, sizeof(note));
    strncat(st, note, sizeof(st) - strlen(st) - 1);
    worker__child_prefix(w, c, pre, sizeof(pre));
    if (c->inflight) {
        struct worker__task *t = c->inflight;
        char m[WORKER_ERROR_MAX];

        c->inflight = NULL;
        worker__fmt(m, sizeof(m), "%schild process pid %d died during a task (%s)",
                    pre, (int)c->pid, st);
        task_finish(w, t, false, -EIO, m);
    }
    if (c->ctl && c->ctl_issued)
        ctl_finish(c, -EIO, 0, "%schild process pid %d died during control %s (%s)",
                   pre, (int)c->pid, ctl_name(c->ctl->cmd), st);
    poison(w, c, "%schild process pid %d is gone (%s)", pre, (int)c->pid, st);
}

static bool endpoint_usable(const struct worker__child *c)
{
    return c->cstate == WORKER__C_READY && !c->reaped && c->mb && !c->poisoned;
}

static void pump_endpoint(worker *w, struct worker__child *c)
{
    while (c->q_head && !c->inflight) {
        struct worker__task *t = c->q_head;
        uint32_t bad = NONE;
        int r = 0;

        if (c->poisoned) {
            c->q_head = t->qnext;
            task_finish(w, t, false, -EIO, c->poison);
            continue;
        }
        r = task_ready(t, &bad);
        if (r == 0)
            break;
        c->q_head = t->qnext;
        if (r < 0) {
            char m[WORKER_ERROR_MAX];
            worker__fmt(m, sizeof(m), "task %u poisoned: it depends on failed task %u",
                        t->id, bad);
            task_finish(w, t, false, -EIO, m);
            continue;
        }
        dispatch(w, c, t);
    }
    if (!c->q_head)
        c->q_tail = NULL;
}

/* WORKER_ANY sub tasks go to any idle sub whose own FIFO is empty. */
static void pump_any(worker *w)
{
    struct worker__task **link = &w->anyq_head, *t, *last = NULL;

    while ((t = *link) != NULL) {
        struct worker__child *idle = NULL;
        bool any_live = false, drop = false;
        char m[WORKER_ERROR_MAX];
        uint32_t bad = NONE;
        int r;

        for (size_t i = 0; i < w->n_children; i++) {
            struct worker__child *c = &w->children[i];
            if (c->kind != WORKER_CHILD_SUB || !endpoint_usable(c))
                continue;
            any_live = true;
            if (!c->inflight && !c->q_head) {
                idle = c;
                break;
            }
        }
        if (!any_live) {
            worker__fmt(m, sizeof(m), "sub_worker: no live sub worker for task %u",
                        t->id);
            drop = true;
        } else if ((r = task_ready(t, &bad)) < 0) {
            worker__fmt(m, sizeof(m), "task %u poisoned: it depends on failed task %u",
                        t->id, bad);
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
        if (drop)
            task_finish(w, t, false, -EIO, m);
        else
            dispatch(w, idle, t);
    }
}

/* Collect every completion, then dispatch. Returns true if a waiter
   should wake. */
static bool progress(worker *w, int64_t now)
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
        if (c->inflight && collect(w, c) && atomic_load(&w->n_task_waiters))
            wake = true;
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

static void drain_fd(int fd)
{
    uint64_t v;

    if (fd >= 0)
        while (read(fd, &v, sizeof(v)) == sizeof(v))
            ;
}

static void *sched_main(void *arg)
{
    worker *w = arg;
    struct pollfd pfd[2 + WORKER_MAX_CHILDREN];
    struct worker__child *who[WORKER_MAX_CHILDREN];

    pthread_mutex_lock(&w->mu);
    while (!w->sched_stop) {
        int64_t now = worker__now_ns(), wake_at = 0;
        size_t n = 0, nc = 0;

        if (progress(w, now))
            notify(w);

        pfd[n].fd = w->kick_fd;
        pfd[n++].events = POLLIN;
        pfd[n].fd = w->doorbell_fd;
        pfd[n++].events = POLLIN;
        for (size_t i = 0; i < w->n_children; i++) {
            struct worker__child *c = &w->children[i];
            if (c->cstate != WORKER__C_READY || c->reaped || c->dead || c->pidfd < 0)
                continue;
            who[nc++] = c;
            pfd[n].fd = c->pidfd;
            pfd[n++].events = POLLIN;
            if (c->ctl && c->ctl_issued && c->ctl->deadline_ns &&
                (!wake_at || c->ctl->deadline_ns < wake_at))
                wake_at = c->ctl->deadline_ns;
        }
        w->sched_parked = true;
        pthread_mutex_unlock(&w->mu);

        if (wake_at) {
            int64_t left = wake_at - worker__now_ns();
            struct timespec ts = { 0, 0 };
            if (left > 0) {
                ts.tv_sec = left / 1000000000;
                ts.tv_nsec = left % 1000000000;
            }
            ppoll(pfd, n, &ts, NULL);
        } else {
            ppoll(pfd, n, NULL, NULL);
        }
        /* Drain before the next scan: a DONE published after the scan rings
           again and keeps the eventfd readable for the next ppoll. */
        drain_fd(w->kick_fd);
        drain_fd(w->doorbell_fd);

        pthread_mutex_lock(&w->mu);
        w->sched_parked = false;
        for (size_t i = 0; i < nc; i++) {
            int status;
            if (!(pfd[2 + i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (worker__child_exited(who[i], &status)) {
                mark_dead(w, who[i], status);
                notify(w);
            }
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- scheduler lifecycle ---- */

int worker__dispatch_init(worker *w)
{
    int rc = pthread_mutex_init(&w->mu, NULL);

    if (rc)
        return -rc;
    w->mu_ready = true;
    w->kick_fd = -1;
    return 0;
}

void worker__dispatch_destroy(worker *w)
{
    if (w->kick_fd >= 0)
        close(w->kick_fd);
    w->kick_fd = -1;
    if (w->mu_ready)
        pthread_mutex_destroy(&w->mu);
    w->mu_ready = false;
}

int worker__sched_start(worker *w)
{
    sigset_t all, old;
    int rc;

    w->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->kick_fd < 0) {
        rc = -errno;
        worker__set_error(w, "eventfd: %s", strerror(errno));
        return rc;
    }
    w->sched_stop = false;
    w->sched_parked = false;
    /* The thread is born with every signal blocked: handlers (the child's
       SIGTERM/SIGHUP, the fixture's budget signal) run on other threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&w->sched, NULL, sched_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        close(w->kick_fd);
        w->kick_fd = -1;
        worker__set_error(w, "scheduler thread: %s", strerror(rc));
        return -rc;
    }
    w->sched_running = true;
    return 0;
}

static void fail_queue(worker *w, struct worker__task **head,
                       struct worker__task **tail, const char *msg)
{
    while (*head) {
        struct worker__task *t = *head;
        *head = t->qnext;
        task_finish(w, t, false, -ESHUTDOWN, msg);
    }
    *tail = NULL;
}

void worker__sched_stop(worker *w, bool abandon)
{
    bool running;

    if (!w->mu_ready)
        return;
    pthread_mutex_lock(&w->mu);
    running = w->sched_running;
    if (running) {
        uint64_t one = 1;
        ssize_t n;

        w->sched_stop = true;
        n = write(w->kick_fd, &one, sizeof(one));
        (void)n;
    }
    pthread_mutex_unlock(&w->mu);
    if (running)
        pthread_join(w->sched, NULL);

    pthread_mutex_lock(&w->mu);
    w->sched_running = false;
    w->sched_parked = false;
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->ctl)
            ctl_finish(c, -ESHUTDOWN, 0, "worker closed while the control "
                       "command was in flight");
        if (!abandon)
            continue;
        if (c->inflight) {
            struct worker__task *t = c->inflight;
            c->inflight = NULL;
            task_finish(w, t, false, -ESHUTDOWN,
                        "worker closed with the task in flight");
        }
        fail_queue(w, &c->q_head, &c->q_tail, "worker closed before the task ran");
    }
    if (abandon)
        fail_queue(w, &w->anyq_head, &w->anyq_tail, "worker closed before the task ran");
    pthread_mutex_unlock(&w->mu);
    notify(w);
    if (w->kick_fd >= 0)
        close(w->kick_fd);
    w->kick_fd = -1;
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

    if (wait_for(w, drained, NULL, deadline_ns) == 0)
        return 0;
    pthread_mutex_lock(&w->mu);
    ops = w->ops;
    for (worker_job *j = w->jobs; j; j = j->next)
        if (!j->done) {
            jobs++;
            tasks += j->n_tasks - j->n_done;
        }
    pthread_mutex_unlock(&w->mu);
    worker__fmt(msg, msg_size, "%u run(s) still in flight (%u orchestration "
                "function(s) running, %u task(s) not done)", jobs, ops, tasks);
    return -ETIMEDOUT;
}

void worker__jobs_free(worker *w)
{
    if (!w->mu_ready)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->jobs) {
        worker_job *j = w->jobs;
        job_unlink(w, j);
        job_free_now(j);
    }
    w->jobs_pending = 0;
    pthread_mutex_unlock(&w->mu);
}

bool worker__in_run_of(const worker *w)
{
    return current_job && current_job->w == w;
}

/* ---- admission ---- */

int worker__admit(worker *w, const char *what)
{
    bool waited = false;
    int rc;

    if (w->parent && !w->in_child) {
        worker__set_error(w, "%s: a worker attached as a child runs in its "
                          "parent's tree", what);
        return -EPERM;
    }
    pthread_mutex_lock(&w->lock);
    while (atomic_load(&w->init_running)) {
        if (gettid() == w->init_tid) {
            pthread_mutex_unlock(&w->lock);
            worker__set_error(w, "%s: init in progress on this thread", what);
            return -EDEADLK;
        }
        /* Wait for the startup epoch and take its outcome (simpler §1.7:
           parked callers are woken with the original failure). */
        pthread_mutex_unlock(&w->lock);
        (void)WORKER__FAULT(WORKER__FP_INIT_WAIT, NULL, 0);
        while (atomic_load(&w->init_running))
            worker__futex_wait(&w->init_running, 1, 0);
        pthread_mutex_lock(&w->lock);
        waited = true;
    }
    switch ((worker_state)atomic_load(&w->state)) {
    case WORKER_READY:
        rc = 0;
        break;
    case WORKER_NEW:
        worker__set_error(w, "%s: not initialized (call worker_init() first)", what);
        rc = -EPERM;
        break;
    case WORKER_FAILED:
        if (waited) {
            /* The original failure; its text is in startup_error (and in
               last_error, written by the initializing thread). */
            rc = w->epoch_rc ? w->epoch_rc : -EPERM;
            break;
        }
        worker__set_error(w, "%s: startup failed; close this worker and create "
                          "a new one", what);
        rc = -EPERM;
        break;
    case WORKER_CLOSED:
    default:
        if (waited && w->epoch_rc) {
            rc = w->epoch_rc;
            break;
        }
        worker__set_error(w, "%s: worker is closed", what);
        rc = -ESHUTDOWN;
        break;
    case WORKER_INITIALIZING:
        /* Not running but INITIALIZING: cannot happen (the commit clears
           both under this lock). */
        worker__set_error(w, "%s: init in progress", what);
        rc = -EINPROGRESS;
        break;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* ---- registration ---- */

static int reg(worker *w, bool sub, const char *name, void *fn, void *arg)
{
    struct worker__callable *tab = sub ? w->subs : w->orchs;
    unsigned *n = sub ? &w->n_sub_callables : &w->n_orch_callables;
    worker *root = w;
    worker_state st;
    int rc;

    if (!fn || (name && strlen(name) >= WORKER_CALLABLE_NAME_MAX)) {
        worker__set_error(w, "register: %s", fn ? "name too long" : "NULL function");
        return -EINVAL;
    }
    while (root->parent)
        root = root->parent;
    pthread_mutex_lock(&root->lock);
    st = (worker_state)atomic_load(&root->state);
    if (st == WORKER_NEW && root != w)
        st = (worker_state)atomic_load(&w->state);
    switch (st) {
    case WORKER_NEW:
        rc = 0;
        break;
    case WORKER_INITIALIZING:
    case WORKER_READY:
        worker__set_error(w, "register before init: callables are copied into "
                          "the children when they are forked (worker is %s)",
                          worker_state_name(st));
        rc = -EBUSY;
        break;
    case WORKER_FAILED:
        worker__set_error(w, "register: startup failed; close this worker and "
                          "create a new one");
        rc = -EPERM;
        break;
    default:
        worker__set_error(w, "register: worker is closed");
        rc = -ESHUTDOWN;
        break;
    }
    if (!rc && *n == WORKER_MAX_CALLABLES) {
        worker__set_error(w, "register: at most %d callables", WORKER_MAX_CALLABLES);
        rc = -ENOSPC;
    }
    if (!rc) {
        snprintf(tab[*n].name, sizeof(tab[*n].name), "%s", name ? name : "");
        tab[*n].fn = fn;
        tab[*n].arg = arg;
        rc = (int)(*n)++;
    }
    pthread_mutex_unlock(&root->lock);
    return rc;
}

int worker_register_sub(worker *w, const char *name, worker_sub_fn fn, void *arg)
{
    if (!w)
        return -EINVAL;
    return reg(w, true, name, (void *)fn, arg);
}

int worker_register_orch(worker *w, const char *name, worker_orch_fn fn,
                         void *arg)
{
    if (!w)
        return -EINVAL;
    return reg(w, false, name, (void *)fn, arg);
}

/* ---- runs ---- */

int worker__submit(worker *w, worker_orch_fn fn, void *arg, const void *args,
                   size_t len, bool counted, worker_job **ret)
{
    worker_job *job = calloc(1, sizeof(*job)), *saved;
    char orch_msg[WORKER_ERROR_MAX];
    int rc;

    pthread_mutex_lock(&w->mu);
    if (!counted)
        w->ops++;
    if (!job) {
        w->ops--;
        pthread_mutex_unlock(&w->mu);
        worker__set_error(w, "run: out of memory");
        return -ENOMEM;
    }
    job->w = w;
    job->args = args;
    job->args_len = len;
    job->open = true;
    for (size_t i = 0; i < WORKER_MAX_CHILDREN; i++)
        job->last_on[i] = NONE;
    job->next = w->jobs;
    if (w->jobs)
        w->jobs->prev = job;
    w->jobs = job;
    w->jobs_pending++;
    pthread_mutex_unlock(&w->mu);

    saved = current_job;
    current_job = job;
    rc = fn(job, arg);
    current_job = saved;
    worker__fmt(orch_msg, sizeof(orch_msg), "%s", job->orch_error);

    pthread_mutex_lock(&w->mu);
    job->open = false;
    w->ops--;
    if (rc)
        job->detached = true; /* its tasks still run; nobody will wait */
    job_check_done(w, job);   /* may free a detached job */
    pthread_mutex_unlock(&w->mu);
    notify(w);                /* close() may wait for ops to reach 0 */
    if (rc) {
        /* Synchronous and not wrapped: the function's own code and text. */
        if (orch_msg[0])
            worker__set_error(w, "%s", orch_msg);
        else
            worker__set_error(w, "orchestration function failed: %s",
                              rc < 0 ? strerror(-rc) : "non-zero return");
        return rc;
    }
    *ret = job;
    return 0;
}

int worker_submit(worker *w, worker_orch_fn fn, void *arg, worker_job **ret)
{
    int rc;

    if (!w || !fn || !ret)
        return -EINVAL;
    if ((rc = worker__admit(w, "run")))
        return rc;
    /* Counted while READY under lock -> mu: a close() that published
       CLOSED after this point drains the run. */
    pthread_mutex_lock(&w->lock);
    if (atomic_load(&w->state) != WORKER_READY) {
        pthread_mutex_unlock(&w->lock);
        worker__set_error(w, "run: worker is closed");
        return -ESHUTDOWN;
    }
    pthread_mutex_lock(&w->mu);
    w->ops++;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_unlock(&w->lock);
    return worker__submit(w, fn, arg, NULL, 0, true, ret);
}

bool worker__job_done(worker_job *job)
{
    bool done;

    pthread_mutex_lock(&job->w->mu);
    done = job->done;
    pthread_mutex_unlock(&job->w->mu);
    return done;
}

int worker__job_result(worker_job *job, const char **msg)
{
    *msg = job->error;
    return job->failed ? job->err_rc : 0;
}

static bool job_is_done(worker *w, void *arg)
{
    (void)w;
    return ((worker_job *)arg)->done;
}

int worker_wait(worker_job *job, double timeout_s)
{
    worker *w;

    if (!job || check_timeout(timeout_s))
        return -EINVAL;
    w = job->w;
    if (current_job == job) {
        worker__set_error(w, "wait: called from the job's own orchestration function");
        return -EDEADLK;
    }
    if (wait_for(w, job_is_done, job, deadline_of(timeout_s))) {
        worker__set_error(w, "wait: the run is still in flight");
        return -ETIMEDOUT;
    }
    /* Done: the job's fields no longer change. */
    if (!job->failed)
        return 0;
    worker__set_error(w, "%s", job->error);
    return job->err_rc;
}

void worker_job_free(worker_job *job)
{
    worker *w;

    if (!job)
        return;
    w = job->w;
    pthread_mutex_lock(&w->mu);
    if (job->done) {
        job_unlink(w, job);
        job_free_now(job);
    } else {
        job->detached = true;
    }
    pthread_mutex_unlock(&w->mu);
}

int worker_run(worker *w, worker_orch_fn fn, void *arg)
{
    worker_job *job;
    int rc = worker_submit(w, fn, arg, &job);

    if (rc)
        return rc;
    rc = worker_wait(job, WORKER_WAIT_FOREVER);
    worker_job_free(job);
    return rc;
}

const char *worker_job_error(const worker_job *job)
{
    return job ? job->error : "";
}

worker *worker_job_worker(worker_job *job)
{
    return job ? job->w : NULL;
}

const void *worker_job_args(const worker_job *job, size_t *len)
{
    if (len)
        *len = job ? job->args_len : 0;
    return job ? job->args : NULL;
}

int worker_job_fail(worker_job *job, int rc, const char *fmt, ...)
{
    va_list ap;

    if (job && fmt) {
        va_start(ap, fmt);
        vsnprintf(job->orch_error, sizeof(job->orch_error), fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ---- tasks ---- */

/* A failed submit's message becomes the job's orchestration error unless
   the function records its own: an orchestration function that returns the
   submit's code reports the submit's text (not "function failed"). */
static void note_submit_error(worker_job *job)
{
    if (current_job == job && !job->orch_error[0])
        worker__fmt(job->orch_error, sizeof(job->orch_error), "%s",
                    job->w->last_error);
}

static int bad_task(worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad_task(worker *w, const char *fmt, ...)
{
    va_list ap;
    char m[300];

    va_start(ap, fmt);
    vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    worker__set_error(w, "submit: %s", m);
    return -EINVAL;
}

/* Validate and resolve the endpoint (-1: any sub). */
static int resolve(worker *w, const worker_task *t, int *ep)
{
    unsigned subs = w->opt.num_subs, chips = w->opt.num_chips;

    switch (t->kind) {
    case WORKER_CHILD_SUB:
        if (t->target != WORKER_ANY && (t->target < 0 || (unsigned)t->target >= subs))
            return bad_task(w, "no sub worker %d (the worker has %u)", t->target, subs);
        if (subs == 0)
            return bad_task(w, "the worker has no sub workers");
        if (t->callable >= w->n_sub_callables)
            return bad_task(w, "no sub callable with id %u (ids come from "
                            "worker_register_sub)", t->callable);
        if (t->args_len > WORKER_TASK_ARGS_MAX || (t->args_len && !t->args))
            return bad_task(w, "argument blob of %zu bytes (at most %d)",
                            t->args_len, WORKER_TASK_ARGS_MAX);
        *ep = t->target == WORKER_ANY ? -1 : t->target;
        return 0;
    case WORKER_CHILD_CHIP:
        if (t->target < 0 || (unsigned)t->target >= chips)
            return bad_task(w, "no chip %d (the worker has %u)", t->target, chips);
        if (t->callable == 0 || t->callable >= WORKER__K_COUNT)
            return bad_task(w, "no kernel with id %u", t->callable);
        if (t->nkargs > WORKER_KERNEL_ARGS_MAX || (t->nkargs && !t->kargs))
            return bad_task(w, "%u kernel arguments (at most %d)", t->nkargs,
                            WORKER_KERNEL_ARGS_MAX);
        *ep = (int)(subs + (unsigned)t->target);
        return 0;
    case WORKER_CHILD_NEXT: {
        worker *n;
        if (t->target < 0 || (unsigned)t->target >= w->n_next)
            return bad_task(w, "no next-level worker with id %d (the worker has %u)",
                            t->target, w->n_next);
        n = w->next[t->target];
        if (t->callable >= n->n_orch_callables)
            return bad_task(w, "no orchestration callable with id %u on "
                            "next-level worker %d (ids come from "
                            "worker_register_orch on it)", t->callable, t->target);
        if (t->args_len > WORKER_TASK_ARGS_MAX || (t->args_len && !t->args))
            return bad_task(w, "argument blob of %zu bytes (at most %d)",
                            t->args_len, WORKER_TASK_ARGS_MAX);
        *ep = (int)(subs + chips + (unsigned)t->target);
        return 0;
    }
    }
    return bad_task(w, "unknown target kind %d", (int)t->kind);
}

int worker_submit_task(worker_job *job, const worker_task *desc)
{
    struct worker__task *t;
    worker *w;
    uint8_t *blob = NULL;
    uint32_t *deps = NULL;
    int ep = -1, rc;

    if (!job || !desc)
        return -EINVAL;
    w = job->w;
    if ((rc = resolve(w, desc, &ep)) ||
        (desc->ndeps && !desc->deps && (rc = bad_task(w, "deps is NULL")))) {
        note_submit_error(job);
        return rc;
    }
    if (desc->args_len && (desc->kind != WORKER_CHILD_CHIP)) {
        if (!(blob = malloc(desc->args_len)))
            return -ENOMEM;
        memcpy(blob, desc->args, desc->args_len);
    }
    if (desc->ndeps && !(deps = malloc(desc->ndeps * sizeof(*deps)))) {
        free(blob);
        return -ENOMEM;
    }

    pthread_mutex_lock(&w->mu);
    if (!job->open) {
        rc = -EPERM;
        goto unlock;
    }
    if (job->failed) {
        rc = job->err_rc; /* fail fast with the original error */
        goto unlock;
    }
    if (ep >= 0 && ((size_t)ep >= w->n_children ||
                    w->children[ep].kind != desc->kind)) {
        rc = -EIO; /* cannot happen on a READY worker */
        goto unlock;
    }
    for (unsigned i = 0; i < desc->ndeps; i++) {
        if (desc->deps[i] < 0 || (uint32_t)desc->deps[i] >= job->n_tasks) {
            rc = -EINVAL;
            goto unlock;
        }
        deps[i] = (uint32_t)desc->deps[i];
    }
    if (job->n_tasks % CHUNK == 0) {
        if (job->n_chunks == job->cap_chunks) {
            uint32_t cap = job->cap_chunks ? 2 * job->cap_chunks : 4;
            /* An array of pointers to chunks. */
            /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
            void *p = realloc(job->chunks, cap * sizeof(*job->chunks));
            if (!p) {
                rc = -ENOMEM;
                goto unlock;
            }
            job->chunks = p;
            job->cap_chunks = cap;
        }
        if (!(job->chunks[job->n_chunks] = calloc(CHUNK, sizeof(**job->chunks)))) {
            rc = -ENOMEM;
            goto unlock;
        }
        job->n_chunks++;
    }
    t = task_at(job, job->n_tasks);
    memset(t, 0, sizeof(*t));
    t->job = job;
    t->id = job->n_tasks;
    t->state = T_QUEUED;
    t->kind = desc->kind;
    t->ep = ep;
    t->callable = desc->callable;
    if (desc->kind == WORKER_CHILD_CHIP) {
        t->nkargs = desc->nkargs;
        if (desc->nkargs)
            memcpy(t->kargs, desc->kargs, desc->nkargs * sizeof(uint64_t));
    } else {
        t->len = (uint32_t)desc->args_len;
        t->blob = blob;
        blob = NULL;
    }
    t->ndeps = desc->ndeps;
    t->deps = deps;
    deps = NULL;
    t->prev = NONE;
    if (ep >= 0) {
        struct worker__child *c = &w->children[ep];
        /* In order per target: depend on the job's previous task there. */
        t->prev = job->last_on[ep];
        job->last_on[ep] = t->id;
        if (c->q_tail)
            c->q_tail->qnext = t;
        else
            c->q_head = t;
        c->q_tail = t;
    } else {
        if (w->anyq_tail)
            w->anyq_tail->qnext = t;
        else
            w->anyq_head = t;
        w->anyq_tail = t;
    }
    job->n_tasks++;
    rc = (int)t->id;
    kick(w);

unlock:
    pthread_mutex_unlock(&w->mu);
    free(blob);
    free(deps);
    if (rc == -EPERM)
        worker__set_error(w, "submit: the orchestration function of this run "
                          "has returned");
    else if (rc == -EINVAL)
        worker__set_error(w, "submit: dependency is not an earlier task of this run");
    else if (rc == -ENOMEM)
        worker__set_error(w, "submit: out of memory");
    else if (rc < 0 && job->failed)
        worker__set_error(w, "%s", job->error);
    if (rc < 0)
        note_submit_error(job);
    return rc;
}

int worker_submit_sub(worker_job *job, int sub, unsigned callable,
                      const void *args, size_t len)
{
    worker_task t = WORKER_TASK_INIT;

    t.kind = WORKER_CHILD_SUB;
    t.target = sub;
    t.callable = callable;
    t.args = args;
    t.args_len = len;
    return worker_submit_task(job, &t);
}

int worker_submit_chip(worker_job *job, unsigned chip, unsigned kernel,
                       const uint64_t *kargs, unsigned nkargs)
{
    worker_task t = WORKER_TASK_INIT;

    t.kind = WORKER_CHILD_CHIP;
    t.target = chip > INT_MAX ? -1 : (int)chip;
    t.callable = kernel;
    t.kargs = kargs;
    t.nkargs = nkargs;
    return worker_submit_task(job, &t);
}

int worker_submit_next(worker_job *job, unsigned worker_id, unsigned callable,
                       const void *args, size_t len)
{
    worker_task t = WORKER_TASK_INIT;

    t.kind = WORKER_CHILD_NEXT;
    t.target = worker_id > INT_MAX ? -1 : (int)worker_id;
    t.callable = callable;
    t.args = args;
    t.args_len = len;
    return worker_submit_task(job, &t);
}

struct task_ref {
    worker_job *job;
    uint32_t id;
};

static bool task_is_done(worker *w, void *arg)
{
    struct task_ref *r = arg;
    uint8_t s = task_at(r->job, r->id)->state;

    (void)w;
    return s == T_DONE || s == T_FAILED;
}

int worker_task_wait(worker_job *job, int task, double timeout_s)
{
    struct task_ref r;
    worker *w;
    int rc;
    uint8_t s;

    if (!job || check_timeout(timeout_s))
        return -EINVAL;
    w = job->w;
    pthread_mutex_lock(&w->mu);
    rc = task < 0 || (uint32_t)task >= job->n_tasks ? -ENOENT : 0;
    pthread_mutex_unlock(&w->mu);
    if (rc)
        return rc;
    r.job = job;
    r.id = (uint32_t)task;
    /* Counted as a task waiter: task completions wake only those. */
    atomic_fetch_add(&w->n_task_waiters, 1);
    rc = wait_for(w, task_is_done, &r, deadline_of(timeout_s));
    atomic_fetch_sub(&w->n_task_waiters, 1);
    if (rc)
        return -ETIMEDOUT;
    pthread_mutex_lock(&w->mu);
    s = task_at(job, r.id)->state;
    pthread_mutex_unlock(&w->mu);
    return s == T_DONE ? 0 : -EIO;
}

int worker_job_result(const worker_job *job, int task, uint64_t *value)
{
    worker *w;
    int rc;

    if (!job)
        return -EINVAL;
    w = job->w;
    pthread_mutex_lock(&w->mu);
    if (task < 0 || (uint32_t)task >= job->n_tasks) {
        rc = -ENOENT;
    } else {
        const struct worker__task *t = task_at(job, (uint32_t)task);
        if (t->state == T_DONE) {
            if (value)
                *value = t->result;
            rc = 0;
        } else {
            rc = t->state == T_FAILED ? -EIO : -EINPROGRESS;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* ---- control commands ---- */

struct ctl_wait {
    struct worker__child *c;
    struct worker__ctl *ctl;
};

static bool ctl_slot_free(worker *w, void *arg)
{
    struct ctl_wait *cw = arg;
    return !w->sched_running || cw->c->ctl == NULL;
}

static bool ctl_done(worker *w, void *arg)
{
    (void)w;
    return ((struct ctl_wait *)arg)->ctl->done;
}

int worker__control(worker *w, struct worker__child *c, unsigned cmd,
                    uint64_t arg, int64_t deadline_ns, uint64_t *result,
                    char *msg, size_t msg_size)
{
    struct worker__ctl ctl;
    struct ctl_wait cw = { c, &ctl };

    memset(&ctl, 0, sizeof(ctl));
    ctl.cmd = cmd;
    ctl.arg = arg;
    ctl.deadline_ns = deadline_ns;
    /* One command per child at a time: wait for the slot (not an issued
       command, so running out of time here poisons nothing). */
    if (wait_for(w, ctl_slot_free, &cw, deadline_ns)) {
        worker__fmt(msg, msg_size, "control %s timed out waiting for another "
                    "command on that child", ctl_name(cmd));
        return -ETIMEDOUT;
    }
    pthread_mutex_lock(&w->mu);
    if (!w->sched_running) {
        pthread_mutex_unlock(&w->mu);
        worker__fmt(msg, msg_size, "control %s: worker is closed", ctl_name(cmd));
        return -ESHUTDOWN;
    }
    if (c->ctl) { /* another caller took the slot first: queue again */
        pthread_mutex_unlock(&w->mu);
        return worker__control(w, c, cmd, arg, deadline_ns, result, msg, msg_size);
    }
    /* The scheduler clears c->ctl when it completes the command, and we
       return only after that (ctl_done below). */
    c->ctl = &ctl; /* cppcheck-suppress autoVariables */
    c->ctl_issued = false;
    kick(w);
    pthread_mutex_unlock(&w->mu);
    /* The scheduler finishes every command it holds: reply, deadline,
       death, or its own stop. */
    wait_for(w, ctl_done, &cw, 0);
    if (ctl.rc == 0 && result)
        *result = ctl.result;
    if (ctl.rc)
        worker__fmt(msg, msg_size, "%s", ctl.msg);
    return ctl.rc;
}

int worker_control(worker *w, worker_child_kind kind, unsigned index,
                   worker_control_cmd cmd, uint64_t arg, double timeout_s,
                   uint64_t *result)
{
    struct worker__child *c;
    char msg[WORKER_ERROR_MAX];
    int rc;

    if (!w)
        return -EINVAL;
    if ((cmd != WORKER_CONTROL_PING && cmd != WORKER_CONTROL_DEVICE_REGIONS) ||
        check_timeout(timeout_s)) {
        worker__set_error(w, "control: unknown command %d or bad timeout", (int)cmd);
        return -EINVAL;
    }
    if ((rc = worker__admit(w, "control")))
        return rc;
    c = worker__find_child(w, kind, index);
    if (!c) {
        worker__set_error(w, "control: no %s child %u", worker_child_kind_name(kind),
                          index);
        return -ENOENT;
    }
    rc = worker__control(w, c, cmd, arg, deadline_of(timeout_s), result, msg,
                         sizeof(msg));
    if (rc)
        worker__set_error(w, "%s", msg);
    return rc;
}

int worker_child_mailbox_state(const worker *w, worker_child_kind kind,
                               unsigned index)
{
    struct worker__child *c;

    if (!w)
        return -EINVAL;
    c = worker__find_child((worker *)w, kind, index);
    if (!c || !c->mb)
        return -ENOENT;
    return (int)worker__mb_load(&c->mb->frame[0].state);
}
