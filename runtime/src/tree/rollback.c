/* SPDX-License-Identifier: MIT */
/*
 * rollback.c — the rollback of a failed startup epoch (tree.h).
 */
#include <signal.h>
#include <string.h>

#include "faults.h"
#include "proc/proc.h"
#include "tree.h"

/*
 * Roll back a failed startup epoch (simpler's _abort_hierarchical, with
 * pidfds): SHUTDOWN to READY children, one cooperative SIGTERM to children
 * still in init (INIT_FAILED ones too: with SIGTERM blocked before
 * publication it only stays pending), an interleaved bounded wait, SIGKILL
 * of the rest and their groups, a bounded blocking reap, and the journal for
 * whatever is still unreaped. The first error message is kept.
 */
void worker__tree_rollback(worker *w)
{
    struct worker__child *set[WORKER_MAX_CHILDREN];
    bool was_ready[WORKER_MAX_CHILDREN], was_failed[WORKER_MAX_CHILDREN];
    size_t n = 0;
    char msg[WORKER_ERROR_MAX];
    int64_t start = worker__now_ns();
    int64_t deadline = start + worker__s_to_ns(w->opt.rollback_timeout_s);
    int64_t graceful_deadline = deadline - worker__tree_kill_reserve(
                                               w->opt.rollback_timeout_s);

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
        worker__tree_report_child(&w->rollback, set[i], was_ready[i],
                                  was_failed[i]);
        if (set[i]->reaped)
            worker__tree_release_child(set[i]);
        else
            worker__tree_journal_child(w, set[i]);
    }
    w->n_children = 0;
    worker__tree_sweep_namespace(w);
}
