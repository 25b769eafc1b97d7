/* SPDX-License-Identifier: MIT */
/*
 * nested.c — a next-level child is itself a worker: what its process does
 * with the nested worker it carries (after its fork, its start, an inner
 * run for a task of the parent, its close). The child entry (child.c)
 * reaches the nested worker only through these calls: the one edge of the
 * recursion in the layering (runtime/src/README.md).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "proc/proc.h"
#include "tree/tree.h"
#include "wire/mailbox.h"

void worker__nested_after_fork(worker *n)
{
    /* This process is single-threaded now: the nested worker's locks may
       have been copied while another thread of the parent held them.
       Fresh ones. */
    pthread_mutex_init(&n->lock, NULL);
    pthread_mutex_init(&n->err_mu, NULL);
    pthread_mutex_init(&n->close_mu, NULL);
    pthread_mutex_init(&n->mu, NULL);
    n->in_child = true;
}

int worker__nested_start(worker *n, _Atomic uint32_t *bell)
{
    /* Completions of inner runs also ring the child's own bell, so its
       serve loop waits for an inner run and for the parent's SHUTDOWN on
       one futex word. Set before the nested scheduler thread exists. */
    n->wake_also = bell;
    return worker__init_nested(n);
}

int worker__nested_close(worker *n)
{
    const worker__mailbox *mb = worker__self.mailbox;
    /* The parent's graceful deadline, if its SHUTDOWN carried one (read
       after the sticky word that published it). */
    int64_t by_ns = mb ? atomic_load_explicit(&mb->frame[0].close_by_ns,
                                              memory_order_acquire)
                       : 0;

    /* A READY nested tree is shut down through its own close: stop its
       scheduler (an inner run still in flight is abandoned: we are
       shutting down), then the two-phase teardown of its children, ended
       by the parent's graceful deadline. */
    worker__sched_stop(n, true);
    atomic_store(&n->state, WORKER_CLOSED);
    return worker__teardown(n, by_ns);
}

/*
 * Run an orchestration callable of the nested worker for a task of the
 * parent: the inner run (simpler's inner_worker.run()). Waits on our own
 * bell, which both the nested scheduler (inner completions) and the parent
 * (SHUTDOWN) ring: if the parent shuts us down mid-run, the run is
 * abandoned (*abandon) and the caller leaves through the shutdown path.
 */
int worker__nested_run(worker *n, worker__mailbox *mb, uint64_t callable,
                       const void *blob, size_t len, char *m, size_t msize,
                       bool *abandon)
{
    worker_job *job = NULL;
    void *copy = NULL;
    const char *jm;
    int rc;

    if (!n || callable >= n->n_orch_callables) {
        snprintf(m, msize, "no orchestration callable with id %llu",
                 (unsigned long long)callable);
        return -EINVAL;
    }
    /* The nested scheduler thread starts with the first inner run. */
    if ((rc = worker__sched_start(n))) {
        worker__fmt(m, msize, "%s", n->last_error);
        return rc;
    }
    if (len && !(copy = malloc(len))) {
        snprintf(m, msize, "out of memory");
        return -ENOMEM;
    }
    if (len)
        memcpy(copy, blob, len);
    rc = worker__submit(n, (worker_orch_fn)n->orchs[callable].fn,
                        n->orchs[callable].arg, copy, len, false, &job);
    if (rc) {
        /* The orchestration function's own failure, not wrapped. */
        worker__fmt(m, msize, "%s", n->last_error);
        free(copy);
        return rc;
    }
    for (;;) {
        uint32_t seq = worker__mb_load(&mb->frame[0].bell);

        if (worker__job_done(job))
            break;
        if (worker__shutdown_requested(mb)) {
            *abandon = true;
            return -ECANCELED; /* job and copy die with the process */
        }
        worker__futex_wait(&mb->frame[0].bell, seq, 0);
    }
    rc = worker__job_result(job, &jm);
    if (rc)
        snprintf(m, msize, "%s", jm);
    worker_job_free(job);
    free(copy);
    return rc;
}
