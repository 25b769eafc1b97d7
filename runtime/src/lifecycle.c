/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c — the public handle: options, validation, topology, and the
 * NEW -> INITIALIZING -> READY | FAILED -> CLOSED state machine with
 * simpler's admission rules.
 *
 * Admission: which operation each state admits is one table
 * (admission.c). worker_init on NEW runs the epoch after the
 * eligible-target precheck (-EINVAL and still NEW if it fails); on
 * INITIALIZING it waits for the epoch and returns its outcome (0, or the
 * original failure's code; -EINPROGRESS only from the initializing thread
 * itself); a worker attached as a child is -EPERM "attached as a child".
 * worker_close: any -> CLOSED at once (absorbing); in-flight runs are
 * drained; teardown runs when live resources remain; the journal is
 * retried on every call.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dispatch/dispatch.h"
#include "faults.h"
#include "internal.h"
#include "proc/proc.h"
#include "tree/tree.h"
#include "wire/wire.h"

/* ---- construction ---- */

/* The scripts of n children (WORKER_SCRIPT_INIT each if src is NULL)
   copied into *dst, their texts into *msgs; nothing for none. False if
   out of memory (what was allocated is the handle's, freed with it). */
static bool copy_scripts(worker_script **dst, char (**msgs)[WORKER_ERROR_MAX],
                         const worker_script *src, unsigned n)
{
    if (!n)
        return true;
    *dst = calloc(n, sizeof(**dst));
    *msgs = calloc(n, sizeof(**msgs));
    if (!*dst || !*msgs)
        return false;
    for (unsigned i = 0; i < n; i++) {
        worker_script s = WORKER_SCRIPT_INIT;
        if (src)
            s = src[i];
        if (s.msg) {
            snprintf((*msgs)[i], WORKER_ERROR_MAX, "%s", s.msg);
            s.msg = (*msgs)[i];
        }
        (*dst)[i] = s;
    }
    return true;
}

WORKER__EXPORT int worker_new(worker **ret, const worker_options *opt)
{
    static const worker_options defaults = WORKER_OPTIONS_INIT;
    worker *w = NULL;
    int rc;

    if (!ret)
        return -EINVAL;
    if (!opt)
        opt = &defaults;
    rc = worker_options_validate(opt, NULL, 0);
    if (rc)
        return rc;
    w = worker__pages_alloc(sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->opt = *opt;
    w->doorbell_fd = -1;
    w->kick_fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->err_mu, NULL);
    pthread_mutex_init(&w->close_mu, NULL);
    if (worker__dispatch_init(w))
        goto nomem;
    atomic_init(&w->state, WORKER_NEW);
    if (!copy_scripts(&w->sub_scripts, &w->sub_msgs, opt->sub_scripts,
                      opt->num_subs) ||
        !copy_scripts(&w->chip_scripts, &w->chip_msgs, opt->chip_scripts,
                      opt->num_chips))
        goto nomem;
    if (opt->self_script.msg) {
        snprintf(w->self_msg, sizeof(w->self_msg), "%s", opt->self_script.msg);
        w->opt.self_script.msg = w->self_msg;
    }
    if (opt->faults && !(w->faults = strdup(opt->faults)))
        goto nomem;
    w->opt.sub_scripts = NULL;
    w->opt.chip_scripts = NULL;
    w->opt.faults = NULL;
    if (!w->opt.chip_memory_bytes)
        w->opt.chip_memory_bytes = 64 * 1024;
    if (!w->opt.chip_pipeline_depth)
        w->opt.chip_pipeline_depth = 1;
    *ret = w;
    return 0;

nomem:
    worker_free(w);
    return -ENOMEM;
}

WORKER__EXPORT int worker_add_child(worker *parent, worker *child)
{
    if (!parent || !child)
        return -EINVAL;
    if (parent == child) {
        worker__set_error(parent, "cannot add a worker to itself");
        return -EINVAL;
    }
    if (parent->opt.level < 4) {
        worker__set_error(parent,
                          "next-level children need level >= 4 (level %d)",
                          parent->opt.level);
        return -EINVAL;
    }
    if (child->opt.level != parent->opt.level - 1) {
        worker__set_error(parent,
                          "a level-%d worker takes level-%d children, not %d",
                          parent->opt.level, parent->opt.level - 1,
                          child->opt.level);
        return -EINVAL;
    }
    if (parent->parent) {
        worker__set_error(parent, "this worker is already attached as a child");
        return -EPERM;
    }
    int rc = worker__admission(parent, WORKER__OP_ADD_CHILD, "add_child",
                               atomic_load(&parent->state));
    if (rc)
        return rc;
    if (child->parent) {
        worker__set_error(parent, "child already attached to another parent");
        return -EEXIST;
    }
    if (atomic_load(&child->state) != WORKER_NEW) {
        worker__set_error(parent, "child must be NEW (is %s)",
                          worker_state_name(atomic_load(&child->state)));
        return -EBUSY;
    }
    if (parent->n_next == WORKER_MAX_NEXT) {
        worker__set_error(parent, "at most %d next-level children",
                          WORKER_MAX_NEXT);
        return -ENOSPC;
    }
    /* Freeze the topology: the child is owned by the parent from now on. */
    child->parent = parent;
    child->next_id = parent->n_next;
    parent->next[parent->n_next++] = child;
    return (int)child->next_id;
}

/* ---- init ---- */

static int check_sigchld(worker *w)
{
    struct sigaction sa;

    /* With SIGCHLD ignored (or SA_NOCLDWAIT) the kernel reaps our children
       behind our back: pidfds and wait statuses would lie. */
    if (sigaction(SIGCHLD, NULL, &sa) == 0 &&
        (sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_NOCLDWAIT))) {
        worker__set_error(w, "SIGCHLD is ignored (or SA_NOCLDWAIT): children "
                             "would be auto-reaped");
        return -EINVAL;
    }
    return 0;
}

/* The root whose worker_init() loaded the process's fault table. */
static worker *faults_owner;

static int load_faults(worker *w)
{
    const char *env = getenv("WORKER_FAULTS");
    char m[200] = "";
    int rc;

    worker__faults_reset();
    if ((rc = worker__faults_parse(w->faults, false, m, sizeof(m))) ||
        (rc = worker__faults_parse(env, false, m, sizeof(m)))) {
        worker__set_error(w, "faults: %s", m);
        worker__faults_reset();
        return rc;
    }
    w->gates = w->opt.gates;
    if (!w->gates && worker__faults_need_gates()) {
        if ((rc = worker_gates_new(&w->gates))) {
            worker__set_error(w, "gates: %s", strerror(-rc));
            worker__faults_reset();
            return rc;
        }
        w->owns_gates = true;
    }
    worker__faults_set_gates(w->gates);
    worker__faults_enter_role("root");
    faults_owner = w;
    return 0;
}

/* Every registered callable must have somewhere to run (simpler's
   TestEligibleTargetPrecheck): checked over the whole tree before anything
   is forked. */
static int check_targets(worker *root, const worker *w)
{
    int rc;

    if (w->n_sub_callables && w->opt.num_subs == 0) {
        worker__set_error(root,
                          "sub callable '%s' (id 0) of the level-%d worker "
                          "has no eligible dispatch target: it needs sub "
                          "workers "
                          "(num_subs)",
                          w->subs[0].name, w->opt.level);
        return -EINVAL;
    }
    for (unsigned i = 0; i < w->n_next; i++)
        if ((rc = check_targets(root, w->next[i])))
            return rc;
    return 0;
}

WORKER__EXPORT int worker_init(worker *w)
{
    int rc;
    worker_state st;

    if (!w)
        return -EINVAL;
    pthread_mutex_lock(&w->lock);
    st = atomic_load(&w->state);
    if (w->parent) {
        worker__set_error(w, "a worker attached as a child is initialized by "
                             "its parent");
        rc = -EPERM;
    } else if (st == WORKER_INITIALIZING && gettid() == w->init_tid) {
        worker__set_error(w, "init already in progress");
        rc = -EINPROGRESS;
    } else if (st == WORKER_INITIALIZING) {
        /* Another thread runs the epoch: wait for it and take its outcome,
           so every caller sees the same original failure (not "in
           progress"). last_error already holds its text; startup_error
           keeps it for good. */
        while (atomic_load(&w->init_running)) {
            pthread_mutex_unlock(&w->lock);
            (void)WORKER__FAULT(WORKER__FP_INIT_WAIT, NULL, 0);
            worker__futex_wait(&w->init_running, 1, 0);
            pthread_mutex_lock(&w->lock);
        }
        rc = w->epoch_rc;
        pthread_mutex_unlock(&w->lock);
        return rc;
    } else if (!(rc = worker__admission(w, WORKER__OP_INIT, "init", st)) &&
               !(rc = check_sigchld(w))) {
        rc = check_targets(w, w); /* NEW: the eligible-target precheck */
    }
    if (rc) {
        pthread_mutex_unlock(&w->lock);
        return rc;
    }
    w->is_root = true;
    if ((rc = worker__ns_init(w)) || (rc = load_faults(w))) {
        if (rc == -ENAMETOOLONG)
            worker__set_error(w, "shm prefix too long");
        pthread_mutex_unlock(&w->lock);
        return rc;
    }
    if ((rc = worker__eventfd(w, &w->doorbell_fd))) {
        pthread_mutex_unlock(&w->lock);
        return rc;
    }
    atomic_store(&w->state, WORKER_INITIALIZING);
    atomic_store(&w->cancel, 0);
    atomic_store(&w->init_running, 1);
    w->init_tid = gettid();
    w->deadline_ns = worker__now_ns() +
                     worker__s_to_ns(w->opt.startup_timeout_s);
    pthread_mutex_unlock(&w->lock);

    rc = worker__start(w);

    /* Commit under the lock: a concurrent close() may have published CLOSED
       (absorbing) and cancelled us; a late READY must not overwrite it. The
       epoch re-checked the cancel flag before returning 0, and a cancel that
       lands after that check finds READY and closes the tree normally. */
    pthread_mutex_lock(&w->lock);
    w->epoch_rc = rc;
    if (rc)
        snprintf(w->startup_error, sizeof(w->startup_error), "%s",
                 w->last_error);
    if (atomic_load(&w->state) == WORKER_INITIALIZING)
        atomic_store(&w->state, rc ? WORKER_FAILED : WORKER_READY);
    atomic_store(&w->init_running, 0);
    worker__futex_wake(&w->init_running, 1 << 30);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* Init of a nested worker, inside the next-level child that runs it. The
   parent set ns_root/ns_path, the deadline and the gates before fork. */
int worker__init_nested(worker *w)
{
    int rc;

    w->is_root = false;
    if ((rc = worker__ns_init(w)))
        return rc;
    if ((rc = worker__eventfd(w, &w->doorbell_fd)))
        return rc;
    /* The SIGTERM/SIGHUP handler rings this, so a barrier parked in ppoll
       sees the cancel at once. */
    worker__self.doorbell_fd = w->doorbell_fd;
    atomic_store(&w->state, WORKER_INITIALIZING);
    rc = worker__start(w);
    atomic_store(&w->state, rc ? WORKER_FAILED : WORKER_READY);
    return rc;
}

/* ---- close ---- */

/* close() with close_mu held. force: runs that do not drain are abandoned
   (worker_free). */
static int close_locked(worker *w, bool force)
{
    char msg[512] = "";
    bool sched;
    int rc = 0;

    pthread_mutex_lock(&w->lock);
    if (atomic_load(&w->init_running)) {
        if (gettid() == w->init_tid) {
            pthread_mutex_unlock(&w->lock);
            worker__set_error(w, "close from the init-owner thread while "
                                 "initializing");
            return -EDEADLK;
        }
        /* Cooperative cancel (simpler #1673): publish CLOSED, latch the
           cancel flag, ring the doorbell the barrier polls, then wait for
           the init to unwind through its own rollback. */
        atomic_store(&w->state, WORKER_CLOSED);
        atomic_store(&w->cancel, 1);
        if (w->doorbell_fd >= 0) {
            uint64_t one = 1;
            ssize_t n = write(w->doorbell_fd, &one, sizeof(one));
            (void)n;
        }
        pthread_mutex_unlock(&w->lock);
        int64_t deadline = worker__now_ns() +
                           worker__s_to_ns(w->opt.close_timeout_s);
        while (atomic_load(&w->init_running)) {
            if (worker__futex_wait(&w->init_running, 1, deadline) ==
                    -ETIMEDOUT &&
                atomic_load(&w->init_running)) {
                worker__set_error(w,
                                  "init did not unwind within %gs of the "
                                  "cancel",
                                  w->opt.close_timeout_s);
                return -ETIMEDOUT;
            }
        }
        pthread_mutex_lock(&w->lock);
    }
    /* CLOSED first: from here no run, control or device call is admitted,
       while the runs already admitted keep submitting and draining. */
    atomic_store(&w->state, WORKER_CLOSED);
    pthread_mutex_unlock(&w->lock);

    pthread_mutex_lock(&w->mu);
    sched = w->sched_running;
    pthread_mutex_unlock(&w->mu);
    if (sched) {
        int64_t deadline = worker__now_ns() +
                           worker__s_to_ns(w->opt.drain_timeout_s);

        /* The lifecycle lock is not held while draining: an orchestration
           function that calls back into the worker must be refused, not
           blocked until the drain gives up. */
        if (worker__dispatch_drain(w, deadline, msg, sizeof(msg)) && !force) {
            worker__set_error(w,
                              "close: %s after %gs; teardown deferred to the "
                              "next close()",
                              msg, w->opt.drain_timeout_s);
            return -ETIMEDOUT;
        }
        /* Controls in flight fail with -ESHUTDOWN; with force, tasks too. */
        worker__sched_stop(w, force);
        msg[0] = '\0';
    }

    pthread_mutex_lock(&w->lock);
    if (worker__has_live_resources(w)) {
        rc = worker__teardown(w, 0);
        /* Not last_error: other threads (a failed control) may write it. */
        if (!rc)
            snprintf(msg, sizeof(msg), "%s", w->close_note);
    }
    if (!rc) {
        /* Device memory the caller never freed: named (and per policy
           reclaimed or kept for a leak checker), after the exits. */
        size_t had = strlen(msg);
        worker__devmem_close(w, msg, sizeof(msg));
        if (strlen(msg) != had)
            worker__set_error(w, "close: %s", msg);
    }
    if (w->doorbell_fd >= 0 && !worker__has_live_resources(w)) {
        close(w->doorbell_fd);
        w->doorbell_fd = -1;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

WORKER__EXPORT int worker_close(worker *w)
{
    int rc;

    if (!w)
        return -EINVAL;
    if (w->parent) {
        worker__set_error(w, "a worker attached as a child is closed by its "
                             "parent");
        return -EPERM;
    }
    if (worker__in_run_of(w)) {
        worker__set_error(w, "close from within a run of this worker");
        return -EDEADLK;
    }
    pthread_mutex_lock(&w->close_mu);
    rc = close_locked(w, false);
    pthread_mutex_unlock(&w->close_mu);
    return rc;
}

static void free_tree(worker *w)
{
    for (unsigned i = 0; i < w->n_next; i++)
        free_tree(w->next[i]);
    if (w->owns_gates)
        worker_gates_free(w->gates);
    if (w->doorbell_fd >= 0)
        close(w->doorbell_fd);
    worker__jobs_free(w);
    worker__devmem_free_all(w);
    worker__dispatch_destroy(w);
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->err_mu);
    pthread_mutex_destroy(&w->close_mu);
    free(w->sub_scripts);
    free(w->sub_msgs);
    free(w->chip_scripts);
    free(w->chip_msgs);
    free(w->faults);
    worker__pages_free(w->children, w->cap_children * sizeof(*w->children));
    free(w->journal);
    worker__pages_free(w, sizeof(*w));
}

WORKER__EXPORT void worker_free(worker *w)
{
    if (!w)
        return;
    if (w->parent)
        return; /* owned by its parent; freed with it */
    if (atomic_load(&w->state) != WORKER_NEW || worker__has_live_resources(w) ||
        w->sched_running) {
        if (worker_close(w) != 0 && !worker__in_run_of(w)) {
            /* Runs that did not drain (or a journal that did not clear):
               abandon them and tear down anyway, once more. */
            pthread_mutex_lock(&w->close_mu);
            close_locked(w, true);
            pthread_mutex_unlock(&w->close_mu);
        }
    }
    if (faults_owner == w) {
        /* The table may point at gates this worker owned. */
        worker__faults_reset();
        faults_owner = NULL;
    }
    free_tree(w);
}

/* ---- accessors ---- */

WORKER__EXPORT worker_state worker_get_state(const worker *w)
{
    return w ? (worker_state)atomic_load(&((worker *)w)->state) : WORKER_CLOSED;
}

WORKER__EXPORT int worker_level(const worker *w)
{
    return w ? w->opt.level : -EINVAL;
}

WORKER__EXPORT const char *worker_last_error(const worker *w)
{
    return w ? w->last_error : "";
}

WORKER__EXPORT size_t worker_child_pids(const worker *w, worker_child_kind kind,
                                        pid_t *pids, size_t n)
{
    size_t count = 0;

    if (!w)
        return 0;
    for (size_t i = 0; i < w->n_children; i++) {
        const struct worker__child *c = &w->children[i];
        if (c->kind != kind || c->reaped || c->cstate == WORKER__C_EMPTY)
            continue;
        if (count < n && pids)
            pids[count] = c->pid;
        count++;
    }
    return count;
}

WORKER__EXPORT int worker_chip_pipeline_depth(const worker *w, unsigned index)
{
    if (!w)
        return -EINVAL;
    for (size_t i = 0; i < w->n_children; i++) {
        const struct worker__child *c = &w->children[i];
        if (c->kind == WORKER_CHILD_CHIP && c->index == index &&
            c->cstate == WORKER__C_READY)
            return (int)c->pipeline_depth;
    }
    return -ENOENT;
}

WORKER__EXPORT worker *worker_next_child(worker *w, unsigned id)
{
    return w && id < w->n_next ? w->next[id] : NULL;
}

WORKER__EXPORT const char *worker_startup_error(const worker *w)
{
    return w ? w->startup_error : "";
}

/* *out = *r, if what r reports happened. */
static int report_copy(const worker_rollback_report *r,
                       worker_rollback_report *out)
{
    if (!out)
        return -EINVAL;
    if (!r->happened)
        return -ENOENT;
    *out = *r;
    return 0;
}

WORKER__EXPORT int worker_last_close(const worker *w,
                                     worker_rollback_report *out)
{
    return w ? report_copy(&w->close_report, out) : -EINVAL;
}

WORKER__EXPORT int worker_last_rollback(const worker *w,
                                        worker_rollback_report *out)
{
    return w ? report_copy(&w->rollback, out) : -EINVAL;
}

WORKER__EXPORT size_t worker_journal_size(const worker *w)
{
    return w ? w->n_journal : 0;
}
