/* SPDX-License-Identifier: MIT */
/*
 * fork.c — one startup epoch of a worker: its children forked in groups
 * (subs, chips, next-level children), each group through the readiness
 * barrier, dispatch opened after the last fork (its scheduler thread
 * starts with the first run); a failed epoch is rolled back (tree.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child/child.h"
#include "dispatch/dispatch.h"
#include "faults.h"
#include "proc/proc.h"
#include "tree.h"

/* What the fork of c gave, into its record. */
static void spawned_to_record(const struct worker__spawned *s,
                              struct worker__child *c)
{
    c->mb = s->mb;
    c->pid = s->pid;
    c->cstate = WORKER__C_INIT;
    c->mb_kept_from_forks = s->mb_kept;
    c->leader = s->leader;
    c->pidfd = s->pidfd;
}

/* Fork child c, the group's entry `at` (child/child.h: struct worker__spawned).
   On success what the fork gave (the mailbox, the pid, the exit
   descriptor) is in group[at], not yet in c: see fork_group. On failure
   c says what there is to undo, and the spawn has undone it. */
static int spawn(worker *w, struct worker__child *c,
                 struct worker__spawned *group, size_t at)
{
    struct worker__spawned *out = &group[at];
    char msg[WORKER_ERROR_MAX];
    sigset_t all, old;
    pid_t pid, self;
    int rc;

    if ((rc = WORKER__FAULT(WORKER__FP_BEFORE_FORK, msg, sizeof(msg)))) {
        worker__set_error(w, "fault before fork of %s %u: %s",
                          worker_child_kind_name(c->kind), c->index, msg);
        return rc;
    }
    if ((rc = worker__mailbox_create(c->shm_name, &out->mb))) {
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
        goto undo;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    self = getpid();
    pid = fork();
    if (pid == 0)
        worker__child_main(w, c, group, at, self); /* never returns */
    rc = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        worker__procfd_after_fork(pid, exit_rd);
        worker__set_error(w, "fork of %s %u: %s",
                          worker_child_kind_name(c->kind), c->index,
                          strerror(rc));
        rc = -rc;
        goto undo;
    }
    out->pid = pid;
    /* The child has its copy; the children forked after it need none. */
    out->mb_kept = worker__mailbox_keep_from_forks(out->mb);
    if (w->is_root) {
        /* Both sides call setpgid, so the group exists before either of us
           can killpg it (the classic job-control race). */
        setpgid(pid, pid);
        out->leader = true;
    }
    out->pidfd = worker__procfd_after_fork(pid, exit_rd);
    if (out->pidfd < 0) {
        rc = errno;
        spawned_to_record(out, c);
        worker__set_error(w, "pidfd_open: %s", strerror(rc));
        rc = -rc;
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
        goto undo;
    }
    return 0;

undo:
    /* The one way out of a failed spawn: no child, or one reaped above,
       so what the spawn made goes (its mailbox and its name, and what a
       child killed in its init may have made: a chip's device memory, a
       next-level child's namespace). The caller drops the record. */
    c->mb = out->mb;
    worker__tree_release_child(c);
    c->shm_name[0] = '\0';
    return rc;
}

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

/* A group's children: their records made whole before the first fork,
   then forked one after the other, then counted and through the barrier.
   Each fork write-protects every private page of this process, and a page
   written after it is copied (a fault, about 2 us here): what a fork
   gives goes into group[] on this stack, whose page the fork's own
   return writes anyway, and into the records (and n_children) once, after
   the group's last fork, not into a record page and the worker's page
   after every fork. A child reads its own mailbox and its earlier
   siblings' descriptors from its copy of group[] (child.c). */
static int fork_group(worker *w, worker_child_kind kind, unsigned count)
{
    struct worker__spawned group[WORKER__GROUP_MAX];
    size_t first = w->n_children, spawned = 0;
    int rc = 0;

    for (unsigned i = 0; i < count; i++) {
        struct worker__child *c = &w->children[first + i];

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
    }
    memset(group, 0, count * sizeof(group[0]));
    while (spawned < count &&
           (rc = spawn(w, &w->children[first + spawned], group, spawned)) == 0)
        spawned++;
    for (size_t i = 0; i < spawned; i++)
        spawned_to_record(&group[i], &w->children[first + i]);
    w->n_children = first + spawned;
    if (rc)
        return rc;
    return worker__tree_barrier(w, first, count);
}

/* The children's records and the journal, to the tree's real size: once
   per worker (a FAILED or CLOSED worker never starts again). */
static int alloc_children(worker *w)
{
    size_t n = (size_t)w->opt.num_subs + w->opt.num_chips + w->n_next;

    if (n == 0 || w->children)
        return 0;
    w->children = worker__pages_alloc(n * sizeof(*w->children));
    /* An array of pointers to the child records: a pointer's size is meant. */
    /* NOLINTNEXTLINE(bugprone-sizeof-expression) */
    w->journal = calloc(n, sizeof(*w->journal));
    if (!w->children || !w->journal) {
        worker__pages_free(w->children, n * sizeof(*w->children));
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
    /* Orphaned groups an earlier epoch could not reap stay recorded: the
       next rollback or close reaps them. */
    worker__child_signals_to_reset(&w->child_sig_reset);
    /* Asked once, by the thread that forks: the children inherit its
       affinity, and read the answer instead of asking again. */
    w->one_cpu = worker__on_one_cpu();
    if ((rc = fork_group(w, WORKER_CHILD_SUB, w->opt.num_subs)) ||
        (rc = fork_group(w, WORKER_CHILD_CHIP, w->opt.num_chips)) ||
        (rc = fork_group(w, WORKER_CHILD_NEXT, w->n_next)))
        goto fail;
    /* The READY commit re-checks the cancel flag and the deadline: a cancel
       that arrived while the last group came up must win. */
    if (worker__tree_cancelled(w)) {
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
    /* Dispatch opens after the last fork of the epoch (its thread starts
       with the first run: worker__sched_start). */
    if ((rc = worker__sched_open(w)))
        goto fail;
    return 0;

fail:
    worker__tree_rollback(w);
    return rc;
}
