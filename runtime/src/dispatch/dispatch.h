/* SPDX-License-Identifier: MIT */
/*
 * dispatch.h — what the files of dispatch share (private): the run
 * queue's data (jobs, tasks, control commands) and its calls, and the
 * calls the layers above make (tree/, lifecycle.c, nested.c).
 *
 *   runq.c     the run queue under `mu`: jobs, tasks, their terminal
 *              states, and the wake-ups between callers and the scheduler
 *   endpoint.c a child's task ring, parent side: what may enter it, put,
 *              collect, what fails when it breaks or dies, poisoning
 *   sched.c    the scheduler thread and its pass, which a waiter takes
 *              while the scheduler is parked
 *   job.c      the caller's side: admission, registration, runs, tasks
 *   control.c  control commands to one child
 *   devmem.c   device memory of the chips, from the parent's side: control
 *              commands, and the regions it knows of (under `mu`)
 *
 * The scheduler thread's lifetime. Dispatch opens as the epoch ends (the
 * kick eventfd and the epoll set of the exit descriptors are made by init,
 * so a caller's test case never sees a descriptor of the worker born in
 * it); the thread starts with the first run, control or device call
 * (worker__sched_start), so a tree that is only started and closed runs
 * no thread and pays neither its creation nor the kick and the join that
 * end it (each a wake-up across CPUs: together about 5% of a 16-chip
 * startup, bench/README.md). Deaths before that are not missed: the
 * start, and a close with no thread, look at the set once and mark the
 * children found gone.
 *
 * Threads and ownership. An orchestration function runs on its caller's
 * thread and enqueues: under the worker's `mu` it appends tasks to the
 * FIFO of their target (or to the WORKER_ANY queue). Each child has a ring
 * of WORKER__MB_TASK_SLOTS task slots in its mailbox (wire/mailbox.h): the
 * parent puts tasks in, the child serves every task the ring holds, in
 * order, before it parks again. A task may enter the ring when its
 * dependencies are done or are earlier in the same ring (the child skips
 * it if one of those fails). While the ring has room and the FIFO's head
 * may go, the submitter moves tasks into it itself, still under `mu`
 * (worker__dispatch_direct, the very code of the scheduler's pump), and
 * rings the child's bell only if the child is parked; otherwise it kicks
 * the scheduler if that is parked, unless the ring is full and its head
 * waits for nothing but room (the child's completions wake the scheduler
 * then). The scheduler thread owns progress: it alone collects
 * CONTROL_DONE, stores CONTROL_REQUEST and samples liveness; it collects
 * TASK_DONE, refills the rings from the FIFOs and wakes waiters, which a
 * waiter also does while the scheduler is parked ("Waiting" below). Every
 * store into a ring, and every collection, is made under `mu`, so no two
 * threads ever write one slot.
 * It never reaps (close() does, after joining it): a child's death is
 * peeked with WNOWAIT, so its wait status is known at once and the zombie
 * still pins its pid and process group until close().
 *
 * Wake-ups between the scheduler and the children. Before it parks, the
 * scheduler arms the `listen` word of every child with tasks in flight:
 * BATCH (ring the doorbell once the ring is empty: one wake-up a batch)
 * or EACH (at the next completion: someone waits for tasks one by one, a
 * task elsewhere depends on one in this ring, or the ring holds tasks of
 * several jobs, one of which may end before the batch does). A caller
 * that starts waiting for a task kicks the scheduler, which arms EACH.
 * Each pass it wakes to, it collects every completion of every ring. The
 * fences that make neither direction lose a wake-up are described in
 * wire/mailbox.h.
 *
 * Waiting. Whoever waits (worker_wait, worker_task_wait, a control caller,
 * close's drain) parks on the `progress` futex word, which the scheduler
 * bumps after completions. A waiter samples the word before it looks at
 * what it waits for, and counts itself in n_waiters before it parks (the
 * futex compares the word then); whoever bumps the word reads n_waiters
 * after the bump, so a wake-up is never lost and no syscall is made when
 * nobody is parked.
 * A waiter does not leave its completions to a parked scheduler: while
 * any waits (n_collectors), a waiter that finds the scheduler parked takes
 * its pass under mu (collects every ring's task completions, refills the
 * rings) and arms `listen` with the WAITERS flag, so the child that
 * completes the next task wakes the waiters on `progress` (the word is in
 * a page shared with the children, struct worker__wake) instead of the
 * scheduler: a round trip is two hand-offs, caller to child and back, not
 * three. The scheduler, once awake, takes every flag back to OFF as it
 * does its levels, and arms them again as it parks; the last waiter to
 * leave arms the levels without the flag, so a parked scheduler hears of
 * every completion no waiter collects. Control commands and deaths stay
 * the scheduler's: a CONTROL_DONE always rings the doorbell, and the
 * scheduler's epoll set holds the exit descriptors.
 */
#ifndef WORKER_DISPATCH_H
#define WORKER_DISPATCH_H

#include "internal.h"

/* "No task": a task's `prev` with no earlier task of its job on the same
   target, a job's last_on[] for a target it never used, no bad
   dependency found. */
#define WORKER__TASK_NONE UINT32_MAX
/* Tasks of a job are allocated in chunks of this many (stable addresses). */
#define WORKER__TASK_CHUNK 256u

enum worker__tstate {
    WORKER__T_QUEUED = 0,
    WORKER__T_RUNNING,
    WORKER__T_DONE,
    WORKER__T_FAILED
};

struct worker__task {
    worker_job *job;
    uint32_t id;
    uint8_t state;
    worker_child_kind kind;
    int ep; /* index in w->children; -1: WORKER_ANY */
    uint32_t callable;
    uint32_t nkargs;
    uint64_t kargs[WORKER__MB_KARGS];
    uint32_t len;
    uint8_t *blob;
    uint32_t prev; /* previous task of the job on this target */
    uint32_t ndeps;
    uint32_t *deps;
    uint64_t result;
    struct worker__task *qnext;
    /* While RUNNING: the endpoint whose ring holds it, its number there. */
    int on;
    uint64_t seq;
};

struct worker_job {
    worker *w;
    const void *args; /* next-level task's blob (in a child) */
    size_t args_len;
    struct worker__task **chunks;
    uint32_t n_tasks, n_chunks, cap_chunks;
    uint32_t n_done;
    bool open;     /* its orchestration function is running */
    bool done;     /* !open and every task terminal */
    bool detached; /* freed by whoever sees it done */
    bool failed;
    int err_rc;
    char error[WORKER_ERROR_MAX];      /* the first error */
    char orch_error[WORKER_ERROR_MAX]; /* worker_job_fail() */
    uint32_t last_on[WORKER_MAX_CHILDREN];
    struct worker_job *next, *prev;
};

struct worker__ctl {
    unsigned cmd;
    uint64_t arg;
    int64_t deadline_ns; /* 0: none */
    int64_t issued_ns;
    bool done;
    int rc;
    uint64_t result;
    char msg[WORKER_ERROR_MAX];
};

static inline struct worker__task *worker__task_at(const worker_job *job,
                                                   uint32_t id)
{
    return &job->chunks[id / WORKER__TASK_CHUNK][id % WORKER__TASK_CHUNK];
}

/* sched.c: the direct dispatch */
/* mu held, by a submitter that has just queued onto c: if the scheduler
   runs, move what the FIFO's head allows into c's ring right here (the
   scheduler's own pump) and wake the child if it is parked. True: the
   scheduler needs no wake-up (the FIFO is empty, or its head waits only
   for room in c's ring, which a completion of c will make). False: kick
   the scheduler. */
bool worker__dispatch_direct(worker *w, struct worker__child *c);
/* mu held, by a thread in worker__wait_for(): while the scheduler is
   parked, take its pass (collect task completions, refill the rings; not
   the control commands) and arm `listen` for it. True if it finished
   something another waiter may wait for. */
bool worker__waiter_pass(worker *w);
typedef bool (*worker__pred_fn)(worker *w, void *arg);
/* Wait (mu not held) until pred (under mu) holds or the deadline, taking
   the parked scheduler's pass meanwhile. 0 or -ETIMEDOUT. */
int worker__wait_for(worker *w, worker__pred_fn pred, void *arg,
                     int64_t deadline_ns);

/* endpoint.c: a child's task ring, parent side (mu held) */
void worker__endpoint_poison(worker *w, struct worker__child *c,
                             const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* READY, not reaped, mailbox mapped, not poisoned. */
bool worker__endpoint_usable(const struct worker__child *c);
/* True if t fits in c's ring now: a free slot, and room for its blob. */
bool worker__endpoint_has_room(const struct worker__child *c,
                               const struct worker__task *t);
/* worker__task_ready() of t as the next task of c's ring. */
int worker__endpoint_task_ready(const worker *w, const struct worker__child *c,
                                const struct worker__task *t, uint64_t *after,
                                uint32_t *bad);
/* Put t into the next slot (the caller checked room and readiness; after:
   its dependencies in the ring). False if that slot was not IDLE: the
   endpoint is poisoned, t and the ring failed. Wake the child after a
   batch of puts with worker__endpoint_wake(). */
bool worker__endpoint_put(worker *w, struct worker__child *c,
                          struct worker__task *t, uint64_t after);
/* Ring c's bell if it is parked (counted in c->task_wakeups). */
void worker__endpoint_wake(struct worker__child *c);
/* Collect the completions at the ring's tail, in order, and finish their
   tasks. Returns how many. */
unsigned worker__endpoint_collect(worker *w, struct worker__child *c);
/* True if the oldest task in flight is TASK_DONE. */
bool worker__endpoint_has_completion(struct worker__child *c);
/* Fail every task in flight, the oldest with `first`, the others with
   `rest`. */
void worker__endpoint_fail_ring(worker *w, struct worker__child *c, int rc,
                                const char *first, const char *rest);
/* The `listen` word a parked scheduler wants in c's mailbox. */
uint32_t worker__endpoint_listen_level(const worker *w,
                                       const struct worker__child *c);

/* runq.c */
const char *worker__ctl_name(unsigned cmd);
int worker__check_timeout(double t);   /* 0 or -EINVAL */
int64_t worker__deadline_of(double t); /* absolute ns; 0: none */
/* Bump the progress word and wake whoever waits (mu held or not). */
void worker__notify(worker *w);
void worker__kick(worker *w); /* mu held */
void worker__job_free_now(worker_job *job);
void worker__job_unlink(worker *w, worker_job *job);
bool worker__job_check_done(worker *w, worker_job *job);
void worker__task_finish(worker *w, struct worker__task *t, bool ok, int rc,
                         const char *msg);
/* 1: every dependency of t is done or, with ep >= 0, in flight earlier in
   the ring of endpoint ep, whose next task is number next_seq (their bits
   in *after, wire/mailbox.h); 0: some still pending; -1: one failed (*bad
   gets its id). after may be NULL with ep < 0. */
int worker__task_ready(const struct worker__task *t, int ep, uint64_t next_seq,
                       uint64_t *after, uint32_t *bad);
/* Mark the endpoints whose rings hold a task t waits for (t is not in any
   of them): they must report each completion at once. */
void worker__task_mark_awaited(worker *w, const struct worker__task *t);

/* sched.c */
/* Set up the dispatch state of a worker (mutex). 0 or -errno. */
int worker__dispatch_init(worker *w);
void worker__dispatch_destroy(worker *w);
/* Open dispatch after the last fork of the epoch: the kick and the epoll
   set of the exit descriptors, made while the caller (init) owns them, so
   that no descriptor of the worker is born later in a caller's test case.
   0 or -errno (error set). */
int worker__sched_open(worker *w);
/* Start the scheduler thread if dispatch is open and it does not run yet:
   at the first run, control or device call (worker__admit, a nested run),
   so a tree that is started and closed never runs one. Children that
   died while none watched are marked dead first. 0, or -errno with the
   error set (the thread could not be created; a later call tries again). */
int worker__sched_start(worker *w);
/* Stop and join it; controls in flight fail with -ESHUTDOWN. With
   `abandon`, queued and in-flight tasks fail too (forced teardown). */
void worker__sched_stop(worker *w, bool abandon);
/* Wait until no orchestration function runs and every job is done, or the
   deadline: 0 or -ETIMEDOUT (message names what is left). */
int worker__dispatch_drain(worker *w, int64_t deadline_ns, char *msg,
                           size_t msg_size);
/* Free every job (worker_free). */
void worker__jobs_free(worker *w);

/* job.c */
/* Internal run start (a next-level child's task handler): like
   worker_submit with an argument blob; no admission wait. */
int worker__submit(worker *w, worker_orch_fn fn, void *arg, const void *args,
                   size_t len, bool counted, worker_job **ret);
/* True on a thread running an orchestration function of w. */
bool worker__in_run_of(const worker *w);
bool worker__job_done(worker_job *job);
int worker__job_result(worker_job *job, const char **msg);
/* Admission of an operation that needs READY: waits for an init in
   progress. 0, or the code to return (message set). */
int worker__admit(worker *w, const char *what);

/* control.c */
/* Send a control command and wait (caller's thread). */
int worker__control(worker *w, struct worker__child *c, unsigned cmd,
                    uint64_t arg, int64_t deadline_ns, uint64_t *result,
                    char *msg, size_t msg_size);

/* devmem.c */
/* After teardown: report (and per policy keep or drop) regions the caller
   never freed; unmaps base mappings. Appends to msg. */
void worker__devmem_close(worker *w, char *msg, size_t msg_size);
/* Names close() must not sweep (kept leaks). */
size_t worker__devmem_protect(worker *w, const char **names, size_t max);
void worker__devmem_free_all(worker *w);

#endif /* WORKER_DISPATCH_H */
