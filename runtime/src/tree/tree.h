/* SPDX-License-Identifier: MIT */
/*
 * tree.h — what the files of a worker's tree share (private): the children
 * one startup epoch forks, their readiness barrier, the rollback of a
 * failed epoch, the two-phase close, the journal of what could not be
 * reaped, and the reaping itself.
 *
 *   fork.c         one startup epoch: fork in groups, barrier, rollback
 *   barrier.c      the readiness barrier of a group
 *   rollback.c     the rollback of a failed epoch
 *   teardown.c     the two-phase close, then the journal
 *   disposition.c  how a child left, for both reports
 *   journal.c      unreaped children kept, resources released, namespace swept
 *   reap.c         peek-then-reap, waits against a deadline, orphaned groups
 *
 * Process identity: every child is watched through a pidfd opened right
 * after fork (the child cannot be reaped by anyone but us before that, so
 * the pidfd names the process we forked; proc/procfd.c, with an exit-pipe
 * fallback where pidfd_open is missing, e.g. under valgrind). Signals go
 * through it; a reaped child's pidfd is closed, so a reaped pid is never
 * signalled. Direct children of a root lead their own process group;
 * killpg() of a group is only sent while its leader is unreaped (alive or a
 * zombie), which pins the group id to our group.
 */
#ifndef WORKER_TREE_H
#define WORKER_TREE_H

#include "internal.h"
#include "proc/proc.h"

/* Children one wait may cover: a worker's own plus its journal's. */
#define WORKER__TREE_MAX_WAIT (WORKER_MAX_CHILDREN + WORKER__JOURNAL_MAX)
/* Children of this process a look for orphaned group members reads (every
   thread's, zombies included): far more than a worker forks. */
#define WORKER__TREE_MAX_KIDS 1024
#define WORKER__TREE_KILL_RESERVE_MAX_NS 1000000000LL

/* The part of a budget kept for SIGKILL and the reap after it: a quarter,
   at most a second. */
static inline int64_t worker__tree_kill_reserve(double budget_s)
{
    int64_t r = worker__s_to_ns(budget_s) / 4;
    return r > WORKER__TREE_KILL_RESERVE_MAX_NS
               ? WORKER__TREE_KILL_RESERVE_MAX_NS
               : r;
}

/* A concurrent close() asked this worker to stop, or (inside a next-level
   child) the parent's SIGTERM or its death did. */
static inline bool worker__tree_cancelled(const worker *w)
{
    if (atomic_load(&((worker *)w)->cancel))
        return true;
    /* Inside a next-level child: the parent's SIGTERM or its death. */
    return worker__self.is_child &&
           (worker__self.cancel || worker__self.parent_gone);
}

/* barrier.c: wait until children first..first+count-1 are READY. 0, or
   -EIO (one failed or exited during init), -ETIMEDOUT (startup deadline),
   -ECANCELED, or a fault's code; the error text names the child. */
int worker__tree_barrier(worker *w, size_t first, size_t count);

/* rollback.c: roll a failed startup epoch back; w->rollback reports it. */
void worker__tree_rollback(worker *w);

/* disposition.c: how child c left (was_ready, was_failed: its state when
   the rollback began; a close passes true, false). */
worker_disposition worker__tree_disposition(const struct worker__child *c,
                                            bool was_ready, bool was_failed);
/* Append child c to report r with how it left; the entry,
   or NULL if the report is full (cannot happen: one entry per child). */
worker_rollback_entry *worker__tree_report_child(worker_rollback_report *r,
                                                 const struct worker__child *c,
                                                 bool was_ready,
                                                 bool was_failed);

/* journal.c */
/* Free what a reaped child used (mailbox, device memory, the namespace of
   a next-level child's subtree). */
void worker__tree_release_child(struct worker__child *c);
/* Keep an unreaped child for the next close(). */
void worker__tree_journal_child(worker *w, struct worker__child *c);
/* Release the journal's entries that are reaped now; keep the others. */
void worker__tree_drive_journal(worker *w);
/* Unlink what is left under the worker's shm prefix, except the
   journal's mailboxes and device memory kept on purpose. */
void worker__tree_sweep_namespace(worker *w);
/* The error text: `what` left these children un-reclaimed. */
void worker__tree_journal_inventory(worker *w, const char *what);

/* The tree's calls for the layers above (fork.c, teardown.c, journal.c). */
/* Run one startup epoch (fork groups + barriers); on failure roll back.
   The caller owns the lifecycle state. */
int worker__start(worker *w);
/* Two-phase shutdown of every child, then the journal. 0 or -ETIMEDOUT.
   by_ns: the deadline of the whole teardown if earlier than the close
   budget (a nested worker: its parent's graceful deadline), 0 none. */
int worker__teardown(worker *w, int64_t by_ns);
/* True while children are alive, the journal holds entries or an orphaned
   group has a member left to reap. */
bool worker__has_live_resources(const worker *w);

/* reap.c: reaping a worker's children. */
bool worker__try_reap(worker *w, struct worker__child *c);
size_t worker__wait_reap(worker *w, struct worker__child **set, size_t n,
                         int64_t deadline);
void worker__reap_orphans(worker *w, int64_t deadline);
void worker__send_kill(worker *w, struct worker__child *c);

#endif /* WORKER_TREE_H */
