/* SPDX-License-Identifier: MIT */
/*
 * job.c — the caller's side of dispatch: admission of the operations that
 * need READY, registration of callables, runs (an orchestration function
 * on the caller's thread, enqueueing only) and tasks (dispatch.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "dispatch.h"
#include "faults.h"

/* The job whose orchestration function runs on this thread, if any. */
static _Thread_local worker_job *current_job;

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
        worker__set_error(w,
                          "%s: a worker attached as a child runs in its "
                          "parent's tree",
                          what);
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
    worker_state st = (worker_state)atomic_load(&w->state);
    if (waited && st == WORKER_FAILED) {
        /* The original failure; its text is in startup_error (and in
           last_error, written by the initializing thread). */
        rc = w->epoch_rc ? w->epoch_rc : -EPERM;
    } else if (waited && st == WORKER_CLOSED && w->epoch_rc) {
        rc = w->epoch_rc;
    } else if ((rc = worker__admission(w, WORKER__OP_READY, what, st)) ==
               WORKER__ADMIT_WAIT) {
        /* Not running but INITIALIZING: cannot happen (the commit clears
           both under this lock). */
        worker__set_error(w, "%s: init in progress", what);
        rc = -EINPROGRESS;
    }
    pthread_mutex_unlock(&w->lock);
    /* Admitted: the scheduler thread runs from the first run, control or
       device call of a READY worker on. */
    return rc ? rc : worker__sched_start(w);
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
        worker__set_error(w, "register: %s",
                          fn ? "name too long" : "NULL function");
        return -EINVAL;
    }
    while (root->parent)
        root = root->parent;
    pthread_mutex_lock(&root->lock);
    st = (worker_state)atomic_load(&root->state);
    if (st == WORKER_NEW && root != w)
        st = (worker_state)atomic_load(&w->state);
    rc = worker__admission(w, WORKER__OP_REGISTER, "register", st);
    if (!rc && *n == WORKER_MAX_CALLABLES) {
        worker__set_error(w, "register: at most %d callables",
                          WORKER_MAX_CALLABLES);
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

WORKER__EXPORT int worker_register_sub(worker *w, const char *name,
                                       worker_sub_fn fn, void *arg)
{
    if (!w)
        return -EINVAL;
    return reg(w, true, name, (void *)fn, arg);
}

WORKER__EXPORT int worker_register_orch(worker *w, const char *name,
                                        worker_orch_fn fn, void *arg)
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
        job->last_on[i] = WORKER__TASK_NONE;
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
        job->detached = true;       /* its tasks still run; nobody will wait */
    worker__job_check_done(w, job); /* may free a detached job */
    pthread_mutex_unlock(&w->mu);
    worker__notify(w); /* close() may wait for ops to reach 0 */
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

WORKER__EXPORT int worker_submit(worker *w, worker_orch_fn fn, void *arg,
                                 worker_job **ret)
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

WORKER__EXPORT int worker_wait(worker_job *job, double timeout_s)
{
    worker *w;

    if (!job || worker__check_timeout(timeout_s))
        return -EINVAL;
    w = job->w;
    if (current_job == job) {
        worker__set_error(w, "wait: called from the job's own orchestration "
                             "function");
        return -EDEADLK;
    }
    if (worker__wait_for(w, job_is_done, job, worker__deadline_of(timeout_s))) {
        worker__set_error(w, "wait: the run is still in flight");
        return -ETIMEDOUT;
    }
    /* Done: the job's fields no longer change. */
    if (!job->failed)
        return 0;
    worker__set_error(w, "%s", job->error);
    return job->err_rc;
}

WORKER__EXPORT void worker_job_free(worker_job *job)
{
    worker *w;

    if (!job)
        return;
    w = job->w;
    pthread_mutex_lock(&w->mu);
    if (job->done) {
        worker__job_unlink(w, job);
        worker__job_free_now(job);
    } else {
        job->detached = true;
    }
    pthread_mutex_unlock(&w->mu);
}

WORKER__EXPORT int worker_run(worker *w, worker_orch_fn fn, void *arg)
{
    worker_job *job;
    int rc = worker_submit(w, fn, arg, &job);

    if (rc)
        return rc;
    rc = worker_wait(job, WORKER_WAIT_FOREVER);
    worker_job_free(job);
    return rc;
}

WORKER__EXPORT const char *worker_job_error(const worker_job *job)
{
    return job ? job->error : "";
}

WORKER__EXPORT worker *worker_job_worker(worker_job *job)
{
    return job ? job->w : NULL;
}

WORKER__EXPORT const void *worker_job_args(const worker_job *job, size_t *len)
{
    if (len)
        *len = job ? job->args_len : 0;
    return job ? job->args : NULL;
}

WORKER__EXPORT int worker_job_fail(worker_job *job, int rc, const char *fmt,
                                   ...)
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
        if (t->target != WORKER_ANY &&
            (t->target < 0 || (unsigned)t->target >= subs))
            return bad_task(w, "no sub worker %d (the worker has %u)",
                            t->target, subs);
        if (subs == 0)
            return bad_task(w, "the worker has no sub workers");
        if (t->callable >= w->n_sub_callables)
            return bad_task(w,
                            "no sub callable with id %u (ids come from "
                            "worker_register_sub)",
                            t->callable);
        if (t->args_len > WORKER_TASK_ARGS_MAX || (t->args_len && !t->args))
            return bad_task(w, "argument blob of %zu bytes (at most %d)",
                            t->args_len, WORKER_TASK_ARGS_MAX);
        *ep = t->target == WORKER_ANY ? -1 : t->target;
        return 0;
    case WORKER_CHILD_CHIP:
        if (t->target < 0 || (unsigned)t->target >= chips)
            return bad_task(w, "no chip %d (the worker has %u)", t->target,
                            chips);
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
            return bad_task(w,
                            "no next-level worker with id %d (the worker has "
                            "%u)",
                            t->target, w->n_next);
        n = w->next[t->target];
        if (t->callable >= n->n_orch_callables)
            return bad_task(w,
                            "no orchestration callable with id %u on "
                            "next-level worker %d (ids come from "
                            "worker_register_orch on it)",
                            t->callable, t->target);
        if (t->args_len > WORKER_TASK_ARGS_MAX || (t->args_len && !t->args))
            return bad_task(w, "argument blob of %zu bytes (at most %d)",
                            t->args_len, WORKER_TASK_ARGS_MAX);
        *ep = (int)(subs + chips + (unsigned)t->target);
        return 0;
    }
    }
    return bad_task(w, "unknown target kind %d", (int)t->kind);
}

WORKER__EXPORT int worker_submit_task(worker_job *job, const worker_task *desc)
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
    /* The copies of the blob and the deps, made before the lock: out of
       memory here is reported as under it (below). */
    if ((desc->args_len && desc->kind != WORKER_CHILD_CHIP &&
         !(blob = malloc(desc->args_len))) ||
        (desc->ndeps && !(deps = malloc(desc->ndeps * sizeof(*deps))))) {
        free(blob);
        worker__set_error(w, "submit: out of memory");
        note_submit_error(job);
        return -ENOMEM;
    }
    if (blob)
        memcpy(blob, desc->args, desc->args_len);

    pthread_mutex_lock(&w->mu);
    if (!job->open) {
        rc = -EPERM;
        goto unlock;
    }
    if (job->failed) {
        rc = job->err_rc; /* fail fast with the original error */
        goto unlock;
    }
    if (ep >= 0 &&
        ((size_t)ep >= w->n_children || w->children[ep].kind != desc->kind)) {
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
    if (job->n_tasks % WORKER__TASK_CHUNK == 0) {
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
        /* Not zeroed: each task is cleared as it is made, below, and no
           slot past n_tasks is ever read (a calloc() here cleared 40 KB
           a run, on every round trip's path). */
        if (!(job->chunks[job->n_chunks] = malloc(WORKER__TASK_CHUNK *
                                                  sizeof(**job->chunks)))) {
            rc = -ENOMEM;
            goto unlock;
        }
        job->n_chunks++;
    }
    t = worker__task_at(job, job->n_tasks);
    memset(t, 0, sizeof(*t));
    t->job = job;
    t->id = job->n_tasks;
    t->state = WORKER__T_QUEUED;
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
    t->prev = WORKER__TASK_NONE;
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
    if (ep < 0 || !worker__dispatch_direct(w, &w->children[ep]))
        worker__kick(w);

unlock:
    pthread_mutex_unlock(&w->mu);
    free(blob);
    free(deps);
    if (rc == -EPERM)
        worker__set_error(w, "submit: the orchestration function of this run "
                             "has returned");
    else if (rc == -EINVAL)
        worker__set_error(w, "submit: dependency is not an earlier task of "
                             "this run");
    else if (rc == -ENOMEM)
        worker__set_error(w, "submit: out of memory");
    else if (rc < 0 && job->failed)
        worker__set_error(w, "%s", job->error);
    if (rc < 0)
        note_submit_error(job);
    return rc;
}

/* One task to one target: a callable with its argument blob (sub, next),
   or a kernel with its arguments (chip). */
static int submit_one(worker_job *job, worker_child_kind kind, int target,
                      unsigned callable, const void *args, size_t len,
                      const uint64_t *kargs, unsigned nkargs)
{
    worker_task t = WORKER_TASK_INIT;

    t.kind = kind;
    t.target = target;
    t.callable = callable;
    t.args = args;
    t.args_len = len;
    t.kargs = kargs;
    t.nkargs = nkargs;
    return worker_submit_task(job, &t);
}

/* An index a caller passed as unsigned: past INT_MAX it names no target. */
static int target_of(unsigned index)
{
    return index > INT_MAX ? -1 : (int)index;
}

WORKER__EXPORT int worker_submit_sub(worker_job *job, int sub,
                                     unsigned callable, const void *args,
                                     size_t len)
{
    return submit_one(job, WORKER_CHILD_SUB, sub, callable, args, len, NULL, 0);
}

WORKER__EXPORT int worker_submit_chip(worker_job *job, unsigned chip,
                                      unsigned kernel, const uint64_t *kargs,
                                      unsigned nkargs)
{
    return submit_one(job, WORKER_CHILD_CHIP, target_of(chip), kernel, NULL, 0,
                      kargs, nkargs);
}

WORKER__EXPORT int worker_submit_next(worker_job *job, unsigned worker_id,
                                      unsigned callable, const void *args,
                                      size_t len)
{
    return submit_one(job, WORKER_CHILD_NEXT, target_of(worker_id), callable,
                      args, len, NULL, 0);
}

struct task_ref {
    worker_job *job;
    uint32_t id;
};

static bool task_is_done(worker *w, void *arg)
{
    struct task_ref *r = arg;
    uint8_t s = worker__task_at(r->job, r->id)->state;

    (void)w;
    return s == WORKER__T_DONE || s == WORKER__T_FAILED;
}

WORKER__EXPORT int worker_task_wait(worker_job *job, int task, double timeout_s)
{
    struct task_ref r;
    worker *w;
    int rc;
    uint8_t s;

    if (!job || worker__check_timeout(timeout_s))
        return -EINVAL;
    w = job->w;
    pthread_mutex_lock(&w->mu);
    rc = task < 0 || (uint32_t)task >= job->n_tasks ? -ENOENT : 0;
    if (!rc) {
        /* Counted as a task waiter: task completions wake only those, and
           `listen` is armed for each completion (the wait's own pass, or
           the scheduler's as it parks). */
        atomic_fetch_add(&w->n_task_waiters, 1);
    }
    pthread_mutex_unlock(&w->mu);
    if (rc)
        return rc;
    r.job = job;
    r.id = (uint32_t)task;
    rc = worker__wait_for(w, task_is_done, &r, worker__deadline_of(timeout_s));
    atomic_fetch_sub(&w->n_task_waiters, 1);
    if (rc)
        return -ETIMEDOUT;
    pthread_mutex_lock(&w->mu);
    s = worker__task_at(job, r.id)->state;
    pthread_mutex_unlock(&w->mu);
    return s == WORKER__T_DONE ? 0 : -EIO;
}

WORKER__EXPORT int worker_job_result(const worker_job *job, int task,
                                     uint64_t *value)
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
        const struct worker__task *t = worker__task_at(job, (uint32_t)task);
        if (t->state == WORKER__T_DONE) {
            if (value)
                *value = t->result;
            rc = 0;
        } else {
            rc = t->state == WORKER__T_FAILED ? -EIO : -EINPROGRESS;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}
