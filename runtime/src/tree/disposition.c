/* SPDX-License-Identifier: MIT */
/*
 * disposition.c — how a child left, for the rollback and the close
 * reports alike (tree.h).
 */
#include "tree.h"

/*
 * The one classifier of how a child left, for the rollback and the close
 * reports alike: unreaped (journaled) first; then one that had exited on
 * its own before we asked (seen dead by the scheduler, or reaped before
 * the rollback began); then one we had to SIGKILL; then a READY child
 * that left after SHUTDOWN; then one in init that left after the
 * cooperative SIGTERM; anything else exited (failed, crashed). A close
 * passes was_ready (every child it shuts down was READY). The close's
 * note of abnormal exits reads the same disposition (teardown.c).
 */
worker_disposition worker__tree_disposition(const struct worker__child *c,
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
worker_rollback_entry *worker__tree_report_child(worker_rollback_report *r,
                                                 const struct worker__child *c,
                                                 bool was_ready,
                                                 bool was_failed)
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
    e->disposition = worker__tree_disposition(c, was_ready, was_failed);
    (*count[e->disposition])++;
    return e;
}
