/* SPDX-License-Identifier: MIT */
/*
 * internal.h — the worker handle (struct worker) and the records it owns
 * (children, callables, device regions), shared by libworker's sources;
 * the calls of the files at the top of the layers (admission.c,
 * lifecycle.c, nested.c). Each folder's calls are declared in its own
 * header: wire/wire.h, proc/proc.h, device/device.h, child/child.h,
 * dispatch/dispatch.h, tree/tree.h; util.h and faults.h for the files of
 * those names. Internal non-static names carry the worker__ prefix.
 */
#ifndef WORKER_INTERNAL_H
#define WORKER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include "mpfixture/worker.h"
#include "util.h"
#include "wire/mailbox.h"

/* nested.c: what a next-level child's process does with its nested
   worker. child/child.c calls these: the one upward edge of the layers
   (child -> nested), the recursion of a worker inside its child. */
void worker__nested_after_fork(worker *n);
int worker__nested_start(worker *n, _Atomic uint32_t *bell);
int worker__nested_run(worker *n, worker__mailbox *mb, uint64_t callable,
                       const void *blob, size_t len, char *m, size_t msize,
                       bool *abandon);
int worker__nested_close(worker *n);

/* admission.c: the one table of which operation each state admits. */
enum worker__op {
    WORKER__OP_INIT,
    WORKER__OP_ADD_CHILD, /* the parent's state */
    WORKER__OP_REGISTER,
    WORKER__OP_READY, /* run, control, device memory: need READY */
    WORKER__OP_COUNT
};
#define WORKER__ADMIT_WAIT 1 /* INITIALIZING: wait for the epoch's outcome */
/* 0 (admitted), WORKER__ADMIT_WAIT, or a negative errno with the error
   text set on w ("{op}" in it is `what`). */
int worker__admission(worker *w, enum worker__op op, const char *what,
                      worker_state st);

/* ---- callables and the dispatch types (dispatch/dispatch.h) ---- */

struct worker__callable {
    char name[WORKER_CALLABLE_NAME_MAX];
    void *fn; /* worker_sub_fn or worker_orch_fn */
    void *arg;
};

struct worker__task; /* one submitted task (dispatch/dispatch.h) */
struct worker__ctl;  /* one control command in flight (dispatch/dispatch.h) */

/* A device memory region the parent knows of (dispatch/devmem.c). */
struct worker__region {
    unsigned chip;
    uint32_t id; /* 0: the chip's base memory */
    size_t size;
    void *map; /* parent's mapping, NULL if not mapped */
    char name[WORKER__NAME_MAX + 24];
};

/* ---- children ---- */

enum worker__cstate {
    WORKER__C_EMPTY = 0, /* not forked */
    WORKER__C_INIT,      /* forked, no readiness seen */
    WORKER__C_READY,     /* INIT_READY seen */
    WORKER__C_FAILED,    /* INIT_FAILED seen */
};

struct worker__child {
    worker_child_kind kind;
    unsigned index;
    enum worker__cstate cstate;
    pid_t pid;
    int pidfd; /* -1 once reaped */
    bool reaped;
    bool leader; /* leads its own process group */
    bool shutdown_sent;
    bool sigterm_sent;
    bool sigkill_sent;
    bool exited_before; /* rollback: already reaped when it began */
    bool reap_blocked;  /* a "reap" fault held it this pass */
    int wait_status;
    unsigned pipeline_depth;
    worker__mailbox *mb;     /* NULL once freed */
    bool mb_ring_had;        /* its task ring's pages are there (first task) */
    bool mb_kept_from_forks; /* MADV_DONTFORK: later children lack it */
    char shm_name[WORKER__NAME_MAX];
    /* Named by the parent before fork (the child formats nothing on its
       way to READY, see fork_group): its role ("chip.1",
       "next.1/chip.0"), its process name ("wk-chip-1") and, for a chip,
       its device memory ("<shm_name>.dev"). */
    char role[WORKER__NAME_MAX];
    char proc_name[16];
    char dev_name[WORKER__NAME_MAX + 8];
    worker *nested; /* NEXT: the attached worker it runs */
    char nested_prefix[WORKER__NAME_MAX]; /* NEXT: its subtree's shm prefix */
    worker_script script;
    char script_msg[WORKER_ERROR_MAX];

    /* Dispatch endpoint, parent side; guarded by the worker's mu and only
       touched by its scheduler thread (and by submitters enqueueing). */
    struct worker__task *q_head, *q_tail; /* this target's FIFO */
    /* Its task ring (dispatch/endpoint.c): the tasks in flight by slot,
       the oldest being number seq - n_inflight + 1. */
    struct worker__task *ring[WORKER__MB_TASK_SLOTS];
    unsigned n_inflight;
    /* Its blob area in use: bytes [blob_tail, blob_head), counted from
       the last time the ring was empty (the offset is the count modulo
       the area's size); blob_end[i], blob_head after the task in slot i
       was put. */
    uint64_t blob_head, blob_tail;
    uint64_t blob_end[WORKER__MB_TASK_SLOTS];
    uint64_t seq;            /* last dispatch number */
    bool awaited;            /* a task elsewhere waits for one in its ring */
    uint64_t task_wakeups;   /* times its bell was rung for tasks */
    struct worker__ctl *ctl; /* control command for this child */
    bool ctl_issued;         /* CONTROL_REQUEST stored */
    bool dead;               /* exited (seen through its pidfd), not reaped */
    bool watched;            /* its pidfd is in the scheduler's epoll set */
    bool poisoned;           /* unusable: dead, control timeout, bad frame */
    char poison[WORKER_ERROR_MAX]; /* why, with the kind prefix */
};

/* ---- journal ----
 *
 * A child that could not be reaped in a rollback or close stays in its
 * record (pid, pidfd, mailbox, names) and the journal holds a pointer to
 * it: children are forked by one start per worker, so a record is never
 * reused, and it lives until worker_free(). At most one entry per child.
 */
#define WORKER__JOURNAL_MAX WORKER_MAX_CHILDREN

/* ---- the worker ----
 *
 * Dispatch (dispatch.h) in one paragraph: frames 1..S of every mailbox are
 * the child's task ring (wire/mailbox.h). The scheduler thread (started
 * after the last fork of worker__start, one per READY worker, also inside
 * next-level children) owns progress: it alone stores CONTROL_REQUEST and
 * collects CONTROL_DONE; TASK_DONE is collected by it or, while it is
 * parked, by a thread waiting for a run; TASK_READY is stored by either,
 * or by a submitter that finds room in the ring at submission
 * (dispatch.h), always under mu. It waits in one epoll set of the
 * doorbell eventfd (children ring it when the scheduler listens for their
 * completions), the kick eventfd (submitters ring it when it is parked)
 * and the pidfds of every live child, with the nearest control deadline
 * as timeout: an idle tree parks, and a child that dies is seen at once
 * with its wait status (peeked with WNOWAIT; close() reaps it). Callers
 * enqueue under mu and wait on the `progress` futex word.
 */

/* The words waiters park on, in a page of their own mapped shared before
   the children are forked: a child that completes a task a waiter
   collects itself bumps `progress` and wakes it, with no scheduler
   between them (dispatch.h, "Waiting"). */
struct worker__wake {
    _Atomic uint32_t progress; /* futex word, bumped on every completion */
    /* Threads about to park or parked on it: whoever bumps it reads this
       after the bump and wakes them only if any. */
    _Atomic uint32_t n_waiters;
};

struct worker {
    worker_options opt;
    /* Callables, frozen at init (copied into the children by fork). */
    struct worker__callable subs[WORKER_MAX_CALLABLES];
    unsigned n_sub_callables;
    struct worker__callable orchs[WORKER_MAX_CALLABLES];
    unsigned n_orch_callables;
    worker_script *sub_scripts;
    worker_script *chip_scripts;
    char (*sub_msgs)[WORKER_ERROR_MAX]; /* copied script texts */
    char (*chip_msgs)[WORKER_ERROR_MAX];
    char self_msg[WORKER_ERROR_MAX];
    char *faults;

    _Atomic int state;             /* worker_state */
    _Atomic int cancel;            /* set by a concurrent close() */
    _Atomic uint32_t init_running; /* futex word: 1 while worker_init() runs */
    pid_t init_tid;                /* thread running worker_init() */

    worker *parent; /* attached as a next-level child of */
    unsigned next_id;
    worker *next[WORKER_MAX_NEXT];
    unsigned n_next;

    bool is_root;
    bool in_child; /* the nested copy inside its next-level child */
    bool owns_gates;
    worker_gates *gates;

    /* Namespace: "/wk-<rootpid>-<token>-" + path ("" or "n1." …). */
    char ns_root[48];
    char ns_path[48];
    char prefix[WORKER__NAME_MAX];

    int64_t deadline_ns;      /* startup epoch deadline */
    int doorbell_fd;          /* eventfd children ring, -1 */
    sigset_t child_sig_reset; /* see worker__child_signals_to_reset */

    /* Allocated by worker__start to the tree's real size (subs, chips and
       next-level children), with the journal's room. */
    size_t n_children, cap_children;
    struct worker__child *children;

    size_t n_orphan_groups; /* process groups whose leader we reaped */
    pid_t orphan_groups[WORKER_MAX_CHILDREN];

    size_t n_journal; /* entries, at most cap_children */
    struct worker__child **journal;

    worker_rollback_report rollback;
    worker_rollback_report close_report;
    char last_error[512];
    char startup_error[512];  /* the failed epoch's message, immutable */
    char close_note[300];     /* abnormal exits named by the last teardown */
    int epoch_rc;             /* what the last init epoch returned */
    pthread_mutex_t lock;     /* guards state transitions vs close() */
    pthread_mutex_t err_mu;   /* serialises writers of last_error */
    pthread_mutex_t close_mu; /* one close() at a time */

    /* ---- dispatch (dispatch.h) ----
     * Lock order: lock (lifecycle) before mu. Everything below and the
     * endpoint fields of the children are guarded by mu. */
    pthread_mutex_t mu;
    bool mu_ready;
    bool sched_running; /* dispatch open: from READY until the close */
    /* The scheduler thread exists (first run on): written under mu, read
       without it by every admitted call (worker__sched_start). */
    _Atomic bool sched_thread;
    bool sched_stop;   /* asked to stop */
    bool sched_parked; /* in epoll_wait: a submitter must kick */
    pthread_t sched;
    int kick_fd;    /* eventfd submitters ring, -1 */
    int sched_epfd; /* the scheduler's epoll set, -1 */
    /* The progress word and the count of its waiters, in a page shared
       with the children (struct worker__wake). */
    struct worker__wake *wake;
    /* Threads in worker__wait_for(): while any waits, a parked scheduler
       leaves task completions to them (dispatch.h, "Waiting"). */
    unsigned n_collectors;
    /* This process may run on one CPU only (worker__on_one_cpu(), read
       by init before its forks): a waiter yields once before it parks,
       and an idle child yields instead of spinning. */
    bool one_cpu;
    _Atomic uint32_t n_task_waiters; /* worker_task_wait callers */
    /* Also bumped and woken on every completion (a next-level child's own
       mailbox bell, so its serve loop waits for the inner run and for the
       parent's SHUTDOWN at once); NULL in a root. */
    _Atomic uint32_t *wake_also;
    struct worker_job *jobs; /* every job not freed */
    unsigned jobs_pending;   /* jobs not done */
    unsigned ops;            /* orchestration functions running */
    uint64_t tasks_finished; /* terminal transitions, ever */
    struct worker__task *anyq_head, *anyq_tail; /* WORKER_ANY sub tasks */

    /* ---- device memory (dispatch/devmem.c), guarded by mu ---- */
    struct worker__region *regions;
    size_t n_regions, cap_regions;
};

/* lifecycle.c */
/* Init of a nested worker inside a next-level child (no lock). */
int worker__init_nested(worker *w);

#endif /* WORKER_INTERNAL_H */
