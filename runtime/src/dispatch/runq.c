/* SPDX-License-Identifier: MIT */
/*
 * runq.c — the run queue under the worker's `mu`: jobs and tasks, their
 * terminal states (first error wins per job), and the wake-ups between
 * the callers and the scheduler (dispatch.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "dispatch.h"

const char *worker__ctl_name(unsigned cmd)
{
    switch (cmd) {
    case WORKER_CONTROL_PING:
        return "ping";
    case WORKER__CTRL_DEV_ALLOC:
        return "device_alloc";
    case WORKER__CTRL_DEV_FREE:
        return "device_free";
    case WORKER_CONTROL_DEVICE_REGIONS:
        return "device_regions";
    }
    return "?";
}

int worker__check_timeout(double t)
{
    if (t == WORKER_WAIT_FOREVER)
        return 0;
    if (isnan(t) || isinf(t) || t < 0)
        return -EINVAL;
    return 0;
}

int64_t worker__deadline_of(double t)
{
    if (t == WORKER_WAIT_FOREVER)
        return 0;
    int64_t d = worker__now_ns() + worker__s_to_ns(t);
    return d ? d : 1; /* 0 means "none" */
}

/* ---- wake-ups ---- */

/* Bump the progress word and wake whoever waits (mu held or not). */
void worker__notify(worker *w)
{
    struct worker__wake *k = w->wake;

    atomic_fetch_add(&k->progress, 1);
    if (atomic_load(&k->n_waiters))
        worker__futex_wake(&k->progress, INT_MAX);
    if (w->wake_also) {
        atomic_fetch_add(w->wake_also, 1);
        worker__futex_wake(w->wake_also, INT_MAX);
    }
}

void worker__kick(worker *w)
{
    uint64_t one = 1;

    /* mu held: a parked scheduler has published sched_parked under mu
       before its epoll_wait, so this write cannot be missed. */
    if (w->sched_parked && w->kick_fd >= 0) {
        ssize_t n = write(w->kick_fd, &one, sizeof(one));
        (void)n;
    }
}

/* ---- jobs (mu held unless noted) ---- */

void worker__job_free_now(worker_job *job)
{
    for (uint32_t i = 0; i < job->n_tasks; i++) {
        struct worker__task *t = worker__task_at(job, i);
        free(t->blob);
        free(t->deps);
    }
    for (uint32_t i = 0; i < job->n_chunks; i++)
        free(job->chunks[i]);
    free(job->chunks);
    free(job);
}

void worker__job_unlink(worker *w, worker_job *job)
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
bool worker__job_check_done(worker *w, worker_job *job)
{
    if (job->done || job->open || job->n_done != job->n_tasks)
        return false;
    job->done = true;
    w->jobs_pending--;
    if (job->detached) {
        worker__job_unlink(w, job);
        worker__job_free_now(job);
    }
    return true;
}

/* A task reached a terminal state. First error wins per job. */
void worker__task_finish(worker *w, struct worker__task *t, bool ok, int rc,
                         const char *msg)
{
    worker_job *job = t->job;

    t->state = ok ? WORKER__T_DONE : WORKER__T_FAILED;
    job->n_done++;
    w->tasks_finished++;
    if (!ok && !job->failed) {
        job->failed = true;
        job->err_rc = rc;
        worker__fmt(job->error, sizeof(job->error), "%s", msg);
    }
    worker__job_check_done(w, job);
}

/* One dependency of a task: see worker__task_ready(). */
static int dep_ready(const worker_job *job, uint32_t id, int ep,
                     uint64_t next_seq, uint64_t *after)
{
    const struct worker__task *d = worker__task_at(job, id);

    if (d->state == WORKER__T_FAILED)
        return -1;
    if (d->state == WORKER__T_DONE)
        return 1;
    if (ep >= 0 && d->state == WORKER__T_RUNNING && d->on == ep) {
        /* Earlier in the same ring: served before, in order. */
        *after |= 1ull << (next_seq - 1 - d->seq);
        return 1;
    }
    return 0;
}

int worker__task_ready(const struct worker__task *t, int ep, uint64_t next_seq,
                       uint64_t *after, uint32_t *bad)
{
    const worker_job *job = t->job;
    uint64_t bits = 0;
    int r = 1, d;

    if (t->prev != WORKER__TASK_NONE) {
        d = dep_ready(job, t->prev, ep, next_seq, &bits);
        if (d < 0) {
            *bad = t->prev;
            return -1;
        }
        if (d == 0)
            r = 0;
    }
    for (uint32_t i = 0; i < t->ndeps; i++) {
        d = dep_ready(job, t->deps[i], ep, next_seq, &bits);
        if (d < 0) {
            *bad = t->deps[i];
            return -1;
        }
        if (d == 0)
            r = 0;
    }
    if (after)
        *after = bits;
    return r;
}

static void mark_ring_of(worker *w, const struct worker__task *t, uint32_t id)
{
    const struct worker__task *d = worker__task_at(t->job, id);

    if (d->state == WORKER__T_RUNNING && d->on != t->ep)
        w->children[d->on].awaited = true;
}

void worker__task_mark_awaited(worker *w, const struct worker__task *t)
{
    if (t->prev != WORKER__TASK_NONE)
        mark_ring_of(w, t, t->prev);
    for (uint32_t i = 0; i < t->ndeps; i++)
        mark_ring_of(w, t, t->deps[i]);
}
