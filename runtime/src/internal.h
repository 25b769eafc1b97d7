/* SPDX-License-Identifier: MIT */
/*
 * internal.h — private declarations shared by libworker's sources.
 * Internal non-static names carry the worker__ prefix.
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
#include "wire/mailbox.h"

#define WORKER__NAME_MAX 96

/* libmpfworker is built with hidden visibility: only the definitions
   marked with this are exported — the API of worker.h and the testing
   calls of testing.h (tests/runtime/test_exports checks the list). */
#define WORKER__EXPORT __attribute__((visibility("default")))

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t worker__now_ns(void);
int64_t worker__s_to_ns(double s);

/* ---- numbers in specs ---- */

/* Parse len bytes of decimal digits (nothing else: no sign, no blanks) into
   *out. Returns 0, -EINVAL (empty or not all digits) or -ERANGE (above max,
   overflow included: a value is never wrapped). */
int worker__parse_decimal(const char *s, size_t len, unsigned long long max,
                          unsigned long long *out);

/* ---- futex ---- */

/* Wait while *word == expected, until deadline_ns (0: no deadline). Returns
   0 on wake/value change, -ETIMEDOUT, or -EINTR. Shared (not private) so it
   works across processes on MAP_SHARED memory. */
int worker__futex_wait(_Atomic uint32_t *word, uint32_t expected,
                       int64_t deadline_ns);
void worker__futex_wake(_Atomic uint32_t *word, int n);

/* ---- error text ---- */

/* snprintf that truncates on purpose (no truncation warning). */
void worker__fmt(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void worker__set_error(worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- fault points ---- */

enum worker__fault_point {
    WORKER__FP_SETUP_BEGIN = 0,   /* child: before its init */
    WORKER__FP_SETUP_END,         /* child: init done, before publication */
    WORKER__FP_AFTER_INIT_FAILED, /* child: INIT_FAILED stored, before _exit */
    WORKER__FP_AFTER_INIT_READY,  /* child: INIT_READY stored, before serving */
    WORKER__FP_SERVE_SHUTDOWN,    /* child: shutdown seen, before teardown */
    WORKER__FP_BEFORE_FORK,       /* parent: before each fork */
    WORKER__FP_BARRIER_POLL,      /* parent: each barrier pass */
    WORKER__FP_ROLLBACK_BEGIN,    /* parent: rollback starts */
    WORKER__FP_ROLLBACK_AFTER_SHUTDOWN, /* parent: SHUTDOWN sent to READY children */
    WORKER__FP_ROLLBACK_AFTER_SIGTERM, /* parent: SIGTERM sent to children in init */
    WORKER__FP_ROLLBACK_AFTER_KILL,   /* parent: SIGKILL sent */
    WORKER__FP_CLOSE_BEGIN,           /* parent: close starts */
    WORKER__FP_CLOSE_AFTER_BROADCAST, /* parent: SHUTDOWN broadcast done */
    WORKER__FP_TASK_BEGIN,            /* child: task taken, before it runs;
                                       fail = the task fails */
    WORKER__FP_TASK_END,              /* child: task ran, before TASK_DONE;
                                       fail = the task fails */
    WORKER__FP_CONTROL,               /* child: in the control handler */
    WORKER__FP_REAP,                  /* parent: before reaping an exited child;
                                       fail = treat it as not reapable yet */
    WORKER__FP_INIT_WAIT,             /* parent: a caller (init, run, control,
                                       device call) starts waiting for a
                                       startup epoch in progress */
    WORKER__FP_BEFORE_INIT_READY,     /* child: setup returned, SIGTERM
                                       blocked, before the READY store;
                                       fail = init fails */
    WORKER__FP_COUNT
};

/* Bit set of the points armed for this process's role. One load and one
   predictable branch when nothing is armed. */
extern uint32_t worker__fault_mask;

/* Run the actions armed at `point`. Returns 0, or -EIO for a fail action,
   with the message copied into msg (if msg_size > 0). */
int worker__fault_fire(unsigned point, char *msg, size_t msg_size);
/* ", at fault point <point> (<action>)" for a child's mailbox whose fault
   word is set (the child died or hung at a scripted fault), else "". */
void worker__fault_note(const worker__mailbox *mb, char *buf, size_t size);

#ifndef WORKER_NO_FAULT_POINTS
#define WORKER__FAULT(point, msg, size)                        \
    (__builtin_expect((worker__fault_mask >> (point)) & 1u, 0) \
         ? worker__fault_fire((point), (msg), (size))          \
         : 0)
#else
/* Compiled out (CMake MPF_FAULT_POINTS=OFF, for benchmarks only): the
   arguments stay referenced so no variable turns unused, and the constant
   condition removes the call. Specs still parse; nothing fires. */
#define WORKER__FAULT(point, msg, size) \
    (0 ? worker__fault_fire((point), (msg), (size)) : 0)
#endif

/* Parse a spec and append its entries to the process table (dry_run: check
   only, the table is unchanged). -EINVAL with a message on a syntax error. */
int worker__faults_parse(const char *spec, bool dry_run, char *msg,
                         size_t msg_size);
/* True if any parsed entry names a gate (so a gate set is needed). */
bool worker__faults_need_gates(void);
/* Recompute worker__fault_mask for the role path (after fork). */
void worker__faults_enter_role(const char *role);
void worker__faults_set_gates(worker_gates *g);
/* gate_wait action (gates.c). */
void worker__gate_wait(worker_gates *g, unsigned i);
bool worker__gate_is_open(const worker_gates *g, unsigned i);
/* Drop the table (root worker closed). */
void worker__faults_reset(void);

/* ---- per-process context of a child (inherited copies are reset) ---- */

struct worker__self {
    char role[WORKER__NAME_MAX]; /* "root", "next.1", "next.1/chip.0" */
    bool is_child;
    pid_t ppid_before_fork;   /* pid of the parent, captured before fork */
    int uplink_fd;            /* eventfd of the parent: ring after publishing */
    worker__mailbox *mailbox; /* own mailbox, NULL in a root */
    /* Set from the SIGTERM / SIGHUP handler (async-signal-safe). */
    volatile sig_atomic_t cancel;
    volatile sig_atomic_t parent_gone;
    /* Incremented and futex-woken by the handler, so a wait that raced the
       signal sees a changed word. */
    _Atomic uint32_t wake;
    int doorbell_fd; /* own doorbell (a nested worker's), -1 */
};

extern struct worker__self worker__self;

/* self.c: the parent told this child to stop (the sticky word, a
   SHUTDOWN state) or is gone. */
bool worker__shutdown_requested(const worker__mailbox *mb);

/* nested.c: what a next-level child's process does with its nested
   worker — the one edge of the recursion in the layering. */
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

/* A spin-wait hint to the CPU, where the architecture has one. */
static inline void worker__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* procfd.c: a descriptor per child that turns readable (POLLIN or
   POLLHUP) when it exits — its pidfd, or an exit pipe where pidfd_open is
   missing — and waits and signals through it. */
bool worker__pidfd_missing(void);
/* Before fork: *rd is the fallback's read end (-1 with pidfds). */
int worker__procfd_before_fork(int *rd);
/* After fork in the parent (pid < 0: fork failed, releases it): the
   child's descriptor, or -1 with errno. */
int worker__procfd_after_fork(pid_t pid, int rd);
int worker__procfd_waitid(int fd, pid_t pid, siginfo_t *si, int options);
int worker__procfd_signal(int fd, pid_t pid, int sig);
/* Close the descriptors first..last (a run of a parent's exit
   descriptors, in a child of its fork). */
void worker__procfd_close_range(int first, int last);
/* A waitid() siginfo as a wait status (-1: none). */
int worker__status_from_siginfo(const siginfo_t *si);

/* ---- callables and the dispatch types (dispatch.h) ---- */

struct worker__callable {
    char name[WORKER_CALLABLE_NAME_MAX];
    void *fn; /* worker_sub_fn or worker_orch_fn */
    void *arg;
};

struct worker__task; /* one submitted task (dispatch.h) */
struct worker__ctl;  /* one control command in flight (dispatch.h) */

/* A device memory region the parent knows of (devmem.c). */
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
    struct worker__task *inflight;        /* owns task frame 1 */
    uint64_t seq;                         /* last dispatch number */
    struct worker__ctl *ctl;              /* control command for this child */
    bool ctl_issued;                      /* CONTROL_REQUEST stored */
    bool dead;     /* exited (seen through its pidfd), not reaped */
    bool poisoned; /* unusable: dead, control timeout, bad frame */
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
 * Dispatch (dispatch.h: runq.c, sched.c, job.c, control.c) in one paragraph: frame 1 of every mailbox is the
 * task frame. The scheduler thread (started after the last fork of
 * worker__start, one per READY worker, also inside next-level children) is
 * the single progress owner: it alone stores CONTROL_REQUEST and reads
 * TASK_DONE / CONTROL_DONE; TASK_READY is stored by it, or by a submitter
 * when the frame is free at submission (dispatch.h), always under mu. It
 * waits in one ppoll over the
 * doorbell eventfd (children ring it after every DONE), the kick eventfd
 * (submitters ring it when it is parked) and the pidfds of every live
 * child, with the nearest control deadline as timeout: an idle tree parks,
 * and a child that dies is seen at once with its wait status (peeked with
 * WNOWAIT; close() reaps it). Callers enqueue under mu and wait on the
 * `progress` futex word.
 */

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
    bool sched_running; /* the scheduler thread exists */
    bool sched_stop;    /* asked to stop */
    bool sched_parked;  /* in ppoll: a submitter must kick */
    pthread_t sched;
    int kick_fd; /* eventfd submitters ring, -1 */
    /* Futex word bumped on every completion; waiters park on it. */
    _Atomic uint32_t progress;
    _Atomic uint32_t n_waiters;
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

    /* ---- device memory (devmem.c), guarded by mu ---- */
    struct worker__region *regions;
    size_t n_regions, cap_regions;
};

/* sched.c */
/* Set up the dispatch state of a worker (mutex). 0 or -errno. */
int worker__dispatch_init(worker *w);
void worker__dispatch_destroy(worker *w);
/* Start the scheduler thread: after the last fork of the epoch. */
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

/* child_table.c */
/* The kind prefix of error text from child c: "sub_worker: ",
   "chip dev=N: ", "child_worker level=L: ". */
void worker__child_prefix(const worker *w, const struct worker__child *c,
                          char *buf, size_t size);
struct worker__child *worker__find_child(worker *w, worker_child_kind kind,
                                         unsigned index);

/* devmem.c */
/* After teardown: report (and per policy keep or drop) regions the caller
   never freed; unmaps base mappings. Appends to msg. */
void worker__devmem_close(worker *w, char *msg, size_t msg_size);
/* Names close() must not sweep (kept leaks). */
size_t worker__devmem_protect(worker *w, const char **names, size_t max);
void worker__devmem_free_all(worker *w);

/* tree.c: fork, barrier, rollback and close of one worker's children. */
/* Run one startup epoch (fork groups + barriers); on failure roll back.
   The caller owns the lifecycle state. */
int worker__start(worker *w);
/* Two-phase shutdown of every child, then the journal. 0 or -ETIMEDOUT.
   by_ns: the deadline of the whole teardown if earlier than the close
   budget (a nested worker: its parent's graceful deadline), 0 none. */
int worker__teardown(worker *w, int64_t by_ns);
/* True while children are alive or the journal holds entries. */
bool worker__has_live_resources(const worker *w);

/* lifecycle.c */
/* Init of a nested worker inside a next-level child (no lock). */
int worker__init_nested(worker *w);

/* procfd.c: wait statuses */
/* "exited with code N", "killed by signal N (NAME)". */
void worker__describe_status(int status, char *buf, size_t size);
/* Liveness: has child c exited? Peeks (WNOWAIT, never reaps) and fills
   *status. */
bool worker__child_exited(struct worker__child *c, int *status);

/* reap.c: reaping a worker's children. */
bool worker__try_reap(worker *w, struct worker__child *c);
size_t worker__wait_reap(worker *w, struct worker__child **set, size_t n,
                         int64_t deadline);
void worker__reap_orphans(worker *w, int64_t deadline);
void worker__send_kill(worker *w, struct worker__child *c);

/* child.c */
_Noreturn void worker__child_main(worker *parent, struct worker__child *c,
                                  pid_t ppid_before_fork);
void worker__child_signals_to_reset(sigset_t *set);
_Noreturn void worker__child_exit(int code);
/* Coverage builds: write the gcov counters of the whole process now (and
   start counting afresh), before a path that ends in a signal or SIGKILL
   rather than _exit (a crash, a hang that only SIGKILL ends). Nothing in
   other builds. */
#ifdef MPF_COVERAGE_BUILD
void worker__coverage_flush(void);
#else
static inline void worker__coverage_flush(void)
{
}
#endif

/* device_sim.c via device.h */

/* shm.c */
int worker__ns_init(worker *w);
int worker__shm_sweep(const char *prefix, const char *const *protect,
                      size_t n_protect);

#endif /* WORKER_INTERNAL_H */
