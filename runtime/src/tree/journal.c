/* SPDX-License-Identifier: MIT */
/*
 * journal.c — what a worker keeps of children it could not reap: the
 * journal of their records, the release of a reaped child's resources,
 * the sweep of the worker's shm namespace and the inventory of what is
 * left (tree.h).
 */
#include <stdio.h>
#include <sys/mman.h>

#include "dispatch/dispatch.h"
#include "tree.h"
#include "wire/wire.h"

bool worker__has_live_resources(const worker *w)
{
    if (w->n_journal || w->n_orphan_groups)
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
void worker__tree_release_child(struct worker__child *c)
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

void worker__tree_journal_child(worker *w, struct worker__child *c)
{
    if (w->n_journal == w->cap_children)
        return; /* cannot happen: at most one entry per child */
    w->journal[w->n_journal++] = c;
}

/* Drive the journal: every entry is attempted; reclaimed ones are removed,
   the others kept for the next close(). Child entries must be reaped by the
   caller first (bounded blocking reap with SIGKILL escalation). */
void worker__tree_drive_journal(worker *w)
{
    size_t keep = 0;

    for (size_t i = 0; i < w->n_journal; i++) {
        struct worker__child *c = w->journal[i];

        if (c->reaped)
            worker__tree_release_child(c);
        else
            w->journal[keep++] = c;
    }
    w->n_journal = keep;
}

void worker__tree_sweep_namespace(worker *w)
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

void worker__tree_journal_inventory(worker *w, const char *what)
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
    for (size_t g = 0; g < w->n_orphan_groups && off < sizeof(buf) - 40; g++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                                "%sprocess group %d (a member still alive)",
                                off ? ", " : "", (int)w->orphan_groups[g]);
    worker__set_error(w,
                      "%s left resources un-reclaimed (journaled for the next "
                      "close): %s",
                      what, buf);
}
