/* SPDX-License-Identifier: MIT */
/*
 * barrier.c — the readiness barrier of a group of children just forked:
 * every child READY, or the first that failed, exited or missed the
 * startup deadline named (tree.h).
 *
 * Waiting: one ppoll() over the doorbell eventfd the children ring after
 * every publication and the pidfds of the children still pending, with the
 * remaining time to an absolute deadline. No sleeping, no polling period.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "faults.h"
#include "proc/proc.h"
#include "tree.h"

static void drain_doorbell(const worker *w)
{
    uint64_t v;

    if (w->doorbell_fd >= 0)
        while (read(w->doorbell_fd, &v, sizeof(v)) == sizeof(v))
            ;
}

static void child_label(const struct worker__child *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s worker %u (pid %d)",
             worker_child_kind_name(c->kind), c->index, (int)c->pid);
}

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

int worker__tree_barrier(worker *w, size_t first, size_t count)
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
        if (worker__tree_cancelled(w)) {
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
