/* SPDX-License-Identifier: MIT */
/*
 * tree.c — one worker's children: fork in groups, the readiness barrier,
 * startup rollback, the two-phase close and the cleanup journal.
 *
 * Process identity: every child is watched through a pidfd opened right
 * after fork (the child cannot be reaped by anyone but us before that, so
 * the pidfd names the process we forked; procfd.c, with an exit-pipe
 * fallback where pidfd_open is missing, e.g. under valgrind). Signals go
 * through it; a reaped child's pidfd is closed, so a reaped pid is never
 * signalled. Direct children of a root lead their own process group;
 * killpg() of a group is only sent while its leader is unreaped (alive or a
 * zombie), which pins the group id to our group.
 *
 * Waiting: one ppoll() over the doorbell eventfd the children ring after
 * every publication and the pidfds of the children still pending, with the
 * remaining time to an absolute deadline. No sleeping, no polling period.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define MAX_WAIT (WORKER_MAX_CHILDREN + WORKER__JOURNAL_MAX)
#define KILL_RESERVE_MAX_NS 1000000000LL

/* ---- helpers ---- */

static int64_t kill_reserve(double budget_s)
{
    int64_t r = worker__s_to_ns(budget_s) / 4;
    return r > KILL_RESERVE_MAX_NS ? KILL_RESERVE_MAX_NS : r;
}

static bool cancelled(const worker *w)
{
    if (atomic_load(&((worker *)w)->cancel))
        return true;
    /* Inside a next-level child: the parent's SIGTERM or its death. */
    return worker__self.is_child &&
           (worker__self.cancel || worker__self.parent_gone);
}

static void drain_doorbell(const worker *w)
{
    uint64_t v;

    if (w->doorbell_fd >= 0)
        while (read(w->doorbell_fd, &v, sizeof(v)) == sizeof(v))
            ;
}

bool worker__has_live_resources(const worker *w)
{
    if (w->n_journal)
        return true;
    for (size_t i = 0; i < w->n_children; i++)
        if (w->children[i].cstate != WORKER__C_EMPTY && !w->children[i].reaped)
            return true;
    return false;
}

/* Free what a reaped child used: its mailbox (only now: freeing a live
   child's mailbox would be a use-after-free in the child), the simulated
   device memory a chip may have left, and the nested namespace of a
   next-level child that died without closing its subtree. */
static void release_child(struct worker__child *c)
{
    worker__mailbox_unmap(c->mb);
    c->mb = NULL;
    if (c->shm_name[0]) {
        shm_unlink(c->shm_name);
        if (c->kind == WORKER_CHILD_CHIP)
            shm_unlink(c->dev_name);
    }
    if (c->kind == WORKER_CHILD_NEXT && c->nested_prefix[0])
        worker__shm_sweep(c->nested_prefix, NULL, 0);
}

static void journal_child(worker *w, struct worker__child *c)
{
    if (w->n_journal == w->cap_children)
        return; /* cannot happen: at most one entry per child */
    w->journal[w->n_journal++] = c;
}

/* Drive the journal: every entry is attempted; reclaimed ones are removed,
   the others kept for the next close(). Child entries must be reaped by the
   caller first (bounded blocking reap with SIGKILL escalation). */
static void drive_journal(worker *w)
{
    size_t keep = 0;

    for (size_t i = 0; i < w->n_journal; i++) {
        struct worker__child *c = w->journal[i];

        if (c->reaped)
            release_child(c);
        else
            w->journal[keep++] = c;
    }
    w->n_journal = keep;
}

static void sweep_namespace(worker *w)
{
    const char *protect[WORKER__JOURNAL_MAX + 256];
    size_t n = 0;

    if (!w->prefix[0])
        return;
    for (size_t i = 0; i < w->n_journal; i++)
        protect[n++] = w->journal[i]->shm_name;
    /* Device memory the caller never freed, kept on purpose (policy KEEP):
       the caller's leak, for a leak checker to see. */
    if (w->mu_ready) {
        pthread_mutex_lock(&w->mu);
        n += worker__devmem_protect(w, protect + n, 256);
        pthread_mutex_unlock(&w->mu);
    }
    worker__shm_sweep(w->prefix, protect, n);
}

static void journal_inventory(worker *w, const char *what)
{
    char buf[400];
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < w->n_journal && off < sizeof(buf) - 40; i++) {
        const struct worker__child *c = w->journal[i];
        off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                                "%s%s %u (pid %d)", i ? ", " : "",
                                worker_child_kind_name(c->kind), c->index,
                                (int)c->pid);
    }
    worker__set_error(w,
                      "%s left resources un-reclaimed (journaled for the next "
                      "close): %s",
                      what, buf);
}

/* ---- fork ---- */

static void child_label(const struct worker__child *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s worker %u (pid %d)",
             worker_child_kind_name(c->kind), c->index, (int)c->pid);
}

static int spawn(worker *w, struct worker__child *c)
{
    char msg[WORKER_ERROR_MAX];
    sigset_t all, old;
    pid_t pid, self;
    int rc;

    if ((rc = WORKER__FAULT(WORKER__FP_BEFORE_FORK, msg, sizeof(msg)))) {
        worker__set_error(w, "fault before fork of %s %u: %s",
                          worker_child_kind_name(c->kind), c->index, msg);
        return rc;
    }
    if ((rc = worker__mailbox_create(c->shm_name, &c->mb))) {
        worker__set_error(w, "mailbox %s: %s", c->shm_name, strerror(-rc));
        c->shm_name[0] = '\0';
        return rc;
    }
    if (c->kind == WORKER_CHILD_NEXT) {
        worker *n = c->nested;
        double own = n->opt.startup_timeout_s;
        int64_t mine = worker__now_ns() + worker__s_to_ns(own);

        /* One budget for the whole tree: min(parent's deadline, own). */
        n->deadline_ns = mine < w->deadline_ns ? mine : w->deadline_ns;
        snprintf(n->ns_root, sizeof(n->ns_root), "%s", w->ns_root);
        worker__fmt(n->ns_path, sizeof(n->ns_path), "%sn%u.", w->ns_path,
                    c->index);
        snprintf(c->nested_prefix, sizeof(c->nested_prefix), "%s%s", n->ns_root,
                 n->ns_path);
        n->gates = w->gates;
    }

    /* All signals blocked across fork: the child must not run an inherited
       handler before it has reset the dispositions. */
    int exit_rd;
    if ((rc = worker__procfd_before_fork(&exit_rd))) {
        worker__set_error(w, "exit pipe of %s %u: %s",
                          worker_child_kind_name(c->kind), c->index,
                          strerror(-rc));
        goto undo_mailbox;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    self = getpid();
    pid = fork();
    if (pid == 0)
        worker__child_main(w, c, self); /* never returns */
    rc = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        worker__procfd_after_fork(pid, exit_rd);
        worker__set_error(w, "fork of %s %u: %s",
                          worker_child_kind_name(c->kind), c->index,
                          strerror(rc));
        rc = -rc;
        goto undo_mailbox;
    }
    c->pid = pid;
    c->cstate = WORKER__C_INIT;
    /* The child has its copy; the children forked after it need none. */
    c->mb_kept_from_forks = worker__mailbox_keep_from_forks(c->mb);
    if (w->is_root) {
        /* Both sides call setpgid, so the group exists before either of us
           can killpg it (the classic job-control race). */
        setpgid(pid, pid);
        c->leader = true;
    }
    c->pidfd = worker__procfd_after_fork(pid, exit_rd);
    if (c->pidfd < 0) {
        rc = errno;
        /* The pid is our unreaped child: it cannot have been recycled, so
           this one plain kill() is safe. */
        kill(pid, SIGKILL);
        if (c->leader) {
            /* Children it forked already are orphaned into our care when
               we are a subreaper: the rollback reaps the group. */
            killpg(pid, SIGKILL);
            if (w->n_orphan_groups < WORKER_MAX_CHILDREN)
                w->orphan_groups[w->n_orphan_groups++] = pid;
        }
        waitpid(pid, &c->wait_status, 0);
        c->reaped = true;
        release_child(c);
        worker__set_error(w, "pidfd_open: %s", strerror(rc));
        return -rc;
    }
    return 0;

undo_mailbox:
    /* No child was forked: its mailbox and its name go. */
    worker__mailbox_unmap(c->mb);
    c->mb = NULL;
    shm_unlink(c->shm_name);
    c->shm_name[0] = '\0';
    return rc;
}

/* ---- barrier ---- */

static int barrier_fail_exited(worker *w, struct worker__child *c)
{
    char who[96], st[64], note[96];
    uint32_t s = c->mb ? worker__mb_load(&c->mb->frame[0].state)
                       : WORKER__MB_IDLE;

    child_label(c, who, sizeof(who));
    /* The error tuple was written before INIT_FAILED was released, and the
       child exited after that: the message wins over the wait status. */
    if (s == WORKER__MB_INIT_FAILED) {
        c->cstate = WORKER__C_FAILED;
        worker__set_error(w, "%s failed during init: %s", who,
                          c->mb->frame[0].msg);
        return -EIO;
    }
    worker__describe_status(c->wait_status, st, sizeof(st));
    worker__fault_note(c->mb, note, sizeof(note));
    worker__set_error(w, "%s exited during init before signalling ready (%s%s)",
                      who, st, note);
    return -EIO;
}

static int barrier(worker *w, size_t first, size_t count)
{
    struct pollfd pfd[1 + WORKER_MAX_CHILDREN];
    struct worker__child *pending[WORKER_MAX_CHILDREN];
    char msg[WORKER_ERROR_MAX];
    int rc;

    if (count == 0)
        return 0;
    for (;;) {
        size_t np = 0;

        /* Drain first, then scan: a publication after the scan leaves the
           eventfd readable, so the ppoll below cannot miss it. */
        drain_doorbell(w);
        for (size_t i = first; i < first + count; i++) {
            struct worker__child *c = &w->children[i];
            uint32_t s;

            if (c->cstate == WORKER__C_READY)
                continue;
            s = worker__mb_load(&c->mb->frame[0].state);
            if (s == WORKER__MB_INIT_READY) {
                /* c->mb is set for every child of the barrier (the analyzer
                   supposes a failed fork() may leave errno at 0). */
                /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
                c->pipeline_depth = c->mb->frame[0].depth;
                worker__mb_store(&c->mb->frame[0].state, WORKER__MB_IDLE);
                c->cstate = WORKER__C_READY;
                continue;
            }
            if (s == WORKER__MB_INIT_FAILED) {
                char who[96];
                c->cstate = WORKER__C_FAILED;
                child_label(c, who, sizeof(who));
                worker__set_error(w, "%s failed during init: %s", who,
                                  c->mb->frame[0].msg);
                return -EIO;
            }
            c->reap_blocked = false;
            if (worker__try_reap(w, c))
                return barrier_fail_exited(w, c);
            pending[np++] = c;
        }
        if (np == 0)
            return 0;
        if ((rc = WORKER__FAULT(WORKER__FP_BARRIER_POLL, msg, sizeof(msg)))) {
            worker__set_error(w, "startup aborted at barrier: %s", msg);
            return rc;
        }
        if (cancelled(w)) {
            worker__set_error(w, "init cancelled");
            return -ECANCELED;
        }
        int64_t now = worker__now_ns();
        if (now >= w->deadline_ns) {
            char list[600], note[96];
            size_t off = 0;
            list[0] = '\0';
            for (size_t i = 0; i < np && off < sizeof(list) - 32; i++) {
                worker__fault_note(pending[i]->mb, note, sizeof(note));
                off += (size_t)snprintf(list + off, sizeof(list) - off,
                                        "%s%u (pid %d%s)", i ? ", " : "",
                                        pending[i]->index, (int)pending[i]->pid,
                                        note);
            }
            worker__set_error(w,
                              "%s worker(s) [%s] did not become ready within "
                              "the "
                              "startup deadline (startup deadline exceeded)",
                              worker_child_kind_name(pending[0]->kind), list);
            return -ETIMEDOUT;
        }
        pfd[0].fd = w->doorbell_fd;
        pfd[0].events = POLLIN;
        for (size_t i = 0; i < np; i++) {
            /* A negative fd is ignored by ppoll: a child held by a reap
               fault has a readable pidfd and would make this loop spin. */
            pfd[1 + i].fd = pending[i]->reap_blocked ? -1 : pending[i]->pidfd;
            pfd[1 + i].events = POLLIN;
        }
        struct timespec ts = { (w->deadline_ns - now) / 1000000000,
                               (w->deadline_ns - now) % 1000000000 };
        ppoll(pfd, 1 + np, &ts, NULL); /* EINTR: re-scan, re-check cancel */
    }
}

/* ---- rollback ---- */

/*
 * The one classifier of how a child left, for the rollback and the close
 * reports alike: unreaped (journaled) first; then one that had exited on
 * its own before we asked (seen dead by the scheduler, or reaped before
 * the rollback began); then one we had to SIGKILL; then a READY child
 * that left after SHUTDOWN; then one in init that left after the
 * cooperative SIGTERM; anything else exited (failed, crashed). A close
 * passes was_ready (every child it shuts down was READY).
 */
static worker_disposition disposition_of(const struct worker__child *c,
                                         bool was_ready, bool was_failed)
{
    if (!c->reaped)
        return WORKER_DISP_JOURNALED;
    if (c->dead || c->exited_before)
        return WORKER_DISP_EXITED;
    if (c->sigkill_sent)
        return WORKER_DISP_KILLED;
    if (was_ready && c->shutdown_sent)
        return WORKER_DISP_GRACEFUL;
    if (c->sigterm_sent && !was_failed)
        return WORKER_DISP_CANCELLED;
    return WORKER_DISP_EXITED;
}

/* Append child c to report r with its disposition; the entry, or NULL if
   the report is full (cannot happen: one entry per child). */
static worker_rollback_entry *report_child(worker_rollback_report *r,
                                           const struct worker__child *c,
                                           bool was_ready, bool was_failed)
{
    unsigned *const count[] = {
        [WORKER_DISP_GRACEFUL] = &r->graceful,
        [WORKER_DISP_CANCELLED] = &r->cancelled,
        [WORKER_DISP_EXITED] = &r->exited,
        [WORKER_DISP_KILLED] = &r->killed,
        [WORKER_DISP_JOURNALED] = &r->journaled,
    };
    worker_rollback_entry *e;

    if (r->n == WORKER_MAX_CHILDREN)
        return NULL;
    e = &r->entries[r->n++];
    e->kind = c->kind;
    e->index = c->index;
    e->pid = c->pid;
    e->wait_status = c->wait_status;
    e->disposition = disposition_of(c, was_ready, was_failed);
    (*count[e->disposition])++;
    return e;
}

/*
 * Roll back a failed startup epoch (simpler's _abort_hierarchical, with
 * pidfds): SHUTDOWN to READY children, one cooperative SIGTERM to children
 * still in init (INIT_FAILED ones too: with SIGTERM blocked before
 * publication it only stays pending), an interleaved bounded wait, SIGKILL
 * of the rest and their groups, a bounded blocking reap, and the journal for
 * whatever is still unreaped. The first error message is kept.
 */
static void rollback(worker *w)
{
    struct worker__child *set[WORKER_MAX_CHILDREN];
    bool was_ready[WORKER_MAX_CHILDREN], was_failed[WORKER_MAX_CHILDREN];
    size_t n = 0;
    char msg[WORKER_ERROR_MAX];
    int64_t start = worker__now_ns();
    int64_t deadline = start + worker__s_to_ns(w->opt.rollback_timeout_s);
    int64_t graceful_deadline = deadline -
                                kill_reserve(w->opt.rollback_timeout_s);

    memset(&w->rollback, 0, sizeof(w->rollback));
    w->rollback.happened = true;
    (void)WORKER__FAULT(WORKER__FP_ROLLBACK_BEGIN, msg, sizeof(msg));

    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];

        if (c->cstate == WORKER__C_EMPTY)
            continue;
        if (c->reaped)
            c->exited_before = true;
        /* Promote a child that became ready after the barrier's last scan. */
        if (!c->reaped && c->cstate == WORKER__C_INIT &&
            worker__mb_load(&c->mb->frame[0].state) == WORKER__MB_INIT_READY)
            c->cstate = WORKER__C_READY;
        was_ready[n] = c->cstate == WORKER__C_READY;
        was_failed[n] = c->cstate == WORKER__C_FAILED;
        set[n++] = c;
    }
    /* SHUTDOWN goes to every live child, not only the READY ones: a child
       still in init may finish it and publish INIT_READY after our scan,
       with the SIGTERM below then pending behind its blocked mask. The
       sticky word makes such a child leave its serve loop at once. */
    for (size_t i = 0; i < n; i++)
        if (!set[i]->reaped) {
            worker__mb_send_shutdown(set[i]->mb, graceful_deadline);
            set[i]->shutdown_sent = true;
        }
    (void)WORKER__FAULT(WORKER__FP_ROLLBACK_AFTER_SHUTDOWN, msg, sizeof(msg));
    for (size_t i = 0; i < n; i++)
        if (!set[i]->reaped && !was_ready[i]) {
            worker__procfd_signal(set[i]->pidfd, set[i]->pid, SIGTERM);
            set[i]->sigterm_sent = true;
        }
    (void)WORKER__FAULT(WORKER__FP_ROLLBACK_AFTER_SIGTERM, msg, sizeof(msg));

    if (worker__wait_reap(w, set, n, graceful_deadline)) {
        for (size_t i = 0; i < n; i++)
            worker__send_kill(w, set[i]);
        (void)WORKER__FAULT(WORKER__FP_ROLLBACK_AFTER_KILL, msg, sizeof(msg));
        worker__wait_reap(w, set, n, deadline);
    }
    worker__reap_orphans(w, deadline);

    for (size_t i = 0; i < n; i++) {
        report_child(&w->rollback, set[i], was_ready[i], was_failed[i]);
        if (set[i]->reaped)
            release_child(set[i]);
        else
            journal_child(w, set[i]);
    }
    w->n_children = 0;
    sweep_namespace(w);
}

/* ---- startup epoch ---- */

/* Every name the child needs, formatted here in the parent: a child that
   formats touches printf's code pages, which fork does not map into it
   (file-backed pages are faulted in again by each child), about four page
   faults a child on its way to READY. */
static void name_child(const worker *w, struct worker__child *c)
{
    const char *kind = worker_child_kind_name(c->kind);
    const char *up = w->is_root ? "" : worker__self.role;

    worker__fmt(c->shm_name, sizeof(c->shm_name), "%s%s-%u", w->prefix, kind,
                c->index);
    worker__fmt(c->role, sizeof(c->role), "%s%s%s.%u", up, up[0] ? "/" : "",
                kind, c->index);
    snprintf(c->proc_name, sizeof(c->proc_name), "wk-%s-%u", kind, c->index);
    worker__fmt(c->dev_name, sizeof(c->dev_name), "%s.dev", c->shm_name);
}

static int fork_group(worker *w, worker_child_kind kind, unsigned count)
{
    size_t first = w->n_children;
    int rc;

    for (unsigned i = 0; i < count; i++) {
        struct worker__child *c = &w->children[w->n_children];

        memset(c, 0, sizeof(*c));
        c->kind = kind;
        c->index = i;
        c->pidfd = -1;
        name_child(w, c);
        if (kind == WORKER_CHILD_SUB && w->sub_scripts)
            c->script = w->sub_scripts[i];
        else if (kind == WORKER_CHILD_CHIP && w->chip_scripts)
            c->script = w->chip_scripts[i];
        else if (kind == WORKER_CHILD_NEXT) {
            c->nested = w->next[i];
            c->script = c->nested->opt.self_script;
        }
        /* Counted before fork, so the child sees its siblings' entries. */
        w->n_children++;
        if ((rc = spawn(w, c))) {
            w->n_children--;
            return rc;
        }
    }
    return barrier(w, first, count);
}

/* The children's records and the journal, to the tree's real size: once
   per worker (a FAILED or CLOSED worker never starts again). */
static int alloc_children(worker *w)
{
    size_t n = (size_t)w->opt.num_subs + w->opt.num_chips + w->n_next;

    if (n == 0 || w->children)
        return 0;
    w->children = calloc(n, sizeof(*w->children));
    /* An array of pointers to the child records: a pointer's size is meant. */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
    w->journal = calloc(n, sizeof(*w->journal));
    if (!w->children || !w->journal) {
        free(w->children);
        free(w->journal);
        w->children = NULL;
        w->journal = NULL;
        worker__set_error(w, "out of memory for %zu child records", n);
        return -ENOMEM;
    }
    w->cap_children = n;
    return 0;
}

int worker__start(worker *w)
{
    int rc;

    w->n_children = 0;
    /* A failure here is an epoch that failed like any other: its (empty)
       rollback is reported. */
    if ((rc = alloc_children(w)))
        goto fail;
    w->n_orphan_groups = 0;
    worker__child_signals_to_reset(&w->child_sig_reset);
    if ((rc = fork_group(w, WORKER_CHILD_SUB, w->opt.num_subs)) ||
        (rc = fork_group(w, WORKER_CHILD_CHIP, w->opt.num_chips)) ||
        (rc = fork_group(w, WORKER_CHILD_NEXT, w->n_next)))
        goto fail;
    /* The READY commit re-checks the cancel flag and the deadline: a cancel
       that arrived while the last group came up must win. */
    if (cancelled(w)) {
        worker__set_error(w, "init cancelled");
        rc = -ECANCELED;
        goto fail;
    }
    if (worker__now_ns() > w->deadline_ns) {
        worker__set_error(w,
                          "startup deadline exceeded before the READY commit");
        rc = -ETIMEDOUT;
        goto fail;
    }
    /* The first thread of the tree: after the last fork of the epoch. */
    if ((rc = worker__sched_start(w)))
        goto fail;
    return 0;

fail:
    rollback(w);
    return rc;
}

/* ---- close ---- */

/* The close budget from now, ended by by_ns if that is earlier (0: no
   cap): the reap deadline in *deadline, the graceful one returned. The
   kill reserve stays that of the worker's own budget, so a capped
   teardown escalates earlier rather than reaping in less time. */
static int64_t close_deadlines(const worker *w, int64_t by_ns,
                               int64_t *deadline)
{
    int64_t d = worker__now_ns() + worker__s_to_ns(w->opt.close_timeout_s);

    if (by_ns > 0 && by_ns < d)
        d = by_ns;
    *deadline = d;
    return d - kill_reserve(w->opt.close_timeout_s);
}

int worker__teardown(worker *w, int64_t by_ns)
{
    struct worker__child *set[MAX_WAIT];
    size_t n = 0, n_children_set;
    char msg[WORKER_ERROR_MAX], abnormal[300];
    size_t off = 0;
    int64_t deadline, graceful_deadline;

    w->close_note[0] = '\0';
    (void)WORKER__FAULT(WORKER__FP_CLOSE_BEGIN, msg, sizeof(msg));
    /* Phase 1: broadcast SHUTDOWN to every group at once, so one stuck
       child cannot eat the others' grace (simpler #1398). Each SHUTDOWN
       carries the graceful deadline as of now: the one of phase 2 below
       can only be later, so a next-level child that ends its own teardown
       by it has left before we escalate. */
    graceful_deadline = close_deadlines(w, by_ns, &deadline);
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->cstate == WORKER__C_EMPTY || c->reaped)
            continue;
        worker__mb_send_shutdown(c->mb, graceful_deadline);
        c->shutdown_sent = true;
        set[n++] = c;
    }
    (void)WORKER__FAULT(WORKER__FP_CLOSE_AFTER_BROADCAST, msg, sizeof(msg));
    /* Phase 2: the reap deadline starts after the broadcast. */
    graceful_deadline = close_deadlines(w, by_ns, &deadline);
    n_children_set = n;
    worker__wait_reap(w, set, n, graceful_deadline);

    /* Escalation, inside the budget: survivors of the graceful phase and
       journaled children of earlier rollbacks/closes get SIGKILL and a
       bounded blocking reap (simpler did one WNOHANG per close here). */
    for (size_t i = 0; i < w->n_journal; i++)
        if (!w->journal[i]->reaped)
            set[n++] = w->journal[i];
    for (size_t i = 0; i < n; i++)
        worker__send_kill(w, set[i]);
    worker__wait_reap(w, set, n, deadline);
    worker__reap_orphans(w, deadline);

    abnormal[0] = '\0';
    memset(&w->close_report, 0, sizeof(w->close_report));
    w->close_report.happened = n_children_set > 0;
    for (size_t i = 0; i < n_children_set; i++) {
        struct worker__child *c = set[i];
        worker_rollback_entry *e = report_child(&w->close_report, c, true,
                                                false);

        /* What the child left in its base state word: e.g. a CONTROL_DONE
           that overwrote SHUTDOWN (the sticky word ended it anyway). */
        if (e)
            e->mailbox_state = c->mb ? worker__mb_load(&c->mb->frame[0].state)
                                     : 0;
        if (!c->reaped) {
            journal_child(w, c);
            continue;
        }
        if (c->sigkill_sent && off < sizeof(abnormal) - 64)
            off += (size_t)
                snprintf(abnormal + off, sizeof(abnormal) - off,
                         "%s%s %u (pid %d) ignored SHUTDOWN and was killed",
                         off ? "; " : "", worker_child_kind_name(c->kind),
                         c->index, (int)c->pid);
        else if (c->wait_status != 0 && off < sizeof(abnormal) - 64) {
            char st[64];
            worker__describe_status(c->wait_status, st, sizeof(st));
            off += (size_t)snprintf(abnormal + off, sizeof(abnormal) - off,
                                    "%s%s %u (pid %d) %s", off ? "; " : "",
                                    worker_child_kind_name(c->kind), c->index,
                                    (int)c->pid, st);
        }
        release_child(c);
    }
    w->n_children = 0;
    drive_journal(w);
    sweep_namespace(w);
    if (w->n_journal) {
        journal_inventory(w, "close");
        return -ETIMEDOUT;
    }
    if (abnormal[0])
        worker__set_error(w, "close: %s", abnormal);
    snprintf(w->close_note, sizeof(w->close_note), "%s", abnormal);
    return 0;
}
