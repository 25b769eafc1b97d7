/* SPDX-License-Identifier: MIT */
/*
 * teardown.c — the two-phase close of a worker's children, then its
 * journal (tree.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "faults.h"
#include "proc/proc.h"
#include "tree.h"

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
    return d - worker__tree_kill_reserve(w->opt.close_timeout_s);
}

int worker__teardown(worker *w, int64_t by_ns)
{
    struct worker__child *set[WORKER__TREE_MAX_WAIT];
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
        worker_rollback_entry *e = worker__tree_report_child(&w->close_report,
                                                             c, true, false);

        /* What the child left in its base state word: e.g. a CONTROL_DONE
           that overwrote SHUTDOWN (the sticky word ended it anyway). */
        if (e)
            e->mailbox_state = c->mb ? worker__mb_load(&c->mb->frame[0].state)
                                     : 0;
        if (!c->reaped) {
            worker__tree_journal_child(w, c);
            continue;
        }
        /* The note says what the report says: killed only when the
           classifier says so (a child that had exited on its own before
           the SIGKILL is named by its wait status). */
        if (worker__tree_disposition(c, true, false) == WORKER_DISP_KILLED &&
            off < sizeof(abnormal) - 64)
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
        worker__tree_release_child(c);
    }
    w->n_children = 0;
    worker__tree_drive_journal(w);
    worker__tree_sweep_namespace(w);
    if (w->n_journal || w->n_orphan_groups) {
        worker__tree_journal_inventory(w, "close");
        return -ETIMEDOUT;
    }
    if (abnormal[0])
        worker__set_error(w, "close: %s", abnormal);
    snprintf(w->close_note, sizeof(w->close_note), "%s", abnormal);
    return 0;
}
