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

#include "worker.h"
#include "mailbox.h"

#define WORKER__NAME_MAX 96

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t worker__now_ns(void);
int64_t worker__s_to_ns(double s);
/* Milliseconds left until `deadline_ns` for poll(), rounded up, >= 0. */
int worker__ms_left(int64_t deadline_ns);

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
    WORKER__FP_SETUP_BEGIN = 0,     /* child: before its init */
    WORKER__FP_SETUP_END,           /* child: init done, before publication */
    WORKER__FP_AFTER_INIT_FAILED,   /* child: INIT_FAILED stored, before _exit */
    WORKER__FP_AFTER_INIT_READY,    /* child: INIT_READY stored, before serving */
    WORKER__FP_SERVE_SHUTDOWN,      /* child: shutdown seen, before teardown */
    WORKER__FP_BEFORE_FORK,         /* parent: before each fork */
    WORKER__FP_BARRIER_POLL,        /* parent: each barrier pass */
    WORKER__FP_ROLLBACK_BEGIN,      /* parent: rollback starts */
    WORKER__FP_ROLLBACK_AFTER_SHUTDOWN, /* parent: SHUTDOWN sent to READY children */
    WORKER__FP_ROLLBACK_AFTER_SIGTERM,  /* parent: SIGTERM sent to children in init */
    WORKER__FP_ROLLBACK_AFTER_KILL,     /* parent: SIGKILL sent */
    WORKER__FP_CLOSE_BEGIN,         /* parent: close starts */
    WORKER__FP_CLOSE_AFTER_BROADCAST, /* parent: SHUTDOWN broadcast done */
    WORKER__FP_TASK_BEGIN,          /* child: task taken (part 2) */
    WORKER__FP_TASK_END,            /* child: before TASK_DONE (part 2) */
    WORKER__FP_CONTROL,             /* child: in the control handler */
    WORKER__FP_REAP,                /* parent: before reaping an exited child;
                                       fail = treat it as not reapable yet */
    WORKER__FP_COUNT
};

/* Bit set of the points armed for this process's role. One load and one
   predictable branch when nothing is armed. */
extern uint32_t worker__fault_mask;

/* Run the actions armed at `point`. Returns 0, or -EIO for a fail action,
   with the message copied into msg (if msg_size > 0). */
int worker__fault_fire(unsigned point, char *msg, size_t msg_size);

#define WORKER__FAULT(point, msg, size)                                      \
    (__builtin_expect((worker__fault_mask >> (point)) & 1u, 0)               \
         ? worker__fault_fire((point), (msg), (size))                        \
         : 0)

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
    char role[WORKER__NAME_MAX];  /* "root", "next.1", "next.1/chip.0" */
    bool is_child;
    pid_t ppid_before_fork;       /* pid of the parent, captured before fork */
    int uplink_fd;                /* eventfd of the parent: ring after publishing */
    worker__mailbox *mailbox;     /* own mailbox, NULL in a root */
    /* Set from the SIGTERM / SIGHUP handler (async-signal-safe). */
    volatile sig_atomic_t cancel;
    volatile sig_atomic_t parent_gone;
    /* Incremented and futex-woken by the handler, so a wait that raced the
       signal sees a changed word. */
    _Atomic uint32_t wake;
    int doorbell_fd;              /* own doorbell (a nested worker's), -1 */
};

extern struct worker__self worker__self;

/* ---- children ---- */

enum worker__cstate {
    WORKER__C_EMPTY = 0,  /* not forked */
    WORKER__C_INIT,       /* forked, no readiness seen */
    WORKER__C_READY,      /* INIT_READY seen */
    WORKER__C_FAILED,     /* INIT_FAILED seen */
};

struct worker__child {
    worker_child_kind kind;
    unsigned index;
    enum worker__cstate cstate;
    pid_t pid;
    int pidfd;                 /* -1 once reaped */
    bool reaped;
    bool leader;               /* leads its own process group */
    bool shutdown_sent;
    bool sigterm_sent;
    bool sigkill_sent;
    bool exited_before;        /* rollback: already reaped when it began */
    bool reap_blocked;         /* a "reap" fault held it this pass */
    int wait_status;
    unsigned pipeline_depth;
    worker__mailbox *mb;       /* NULL once freed */
    char shm_name[WORKER__NAME_MAX];
    worker *nested;            /* NEXT: the attached worker it runs */
    char nested_prefix[WORKER__NAME_MAX]; /* NEXT: its subtree's shm prefix */
    worker_script script;
    char script_msg[WORKER_ERROR_MAX];
};

/* ---- journal ---- */

enum worker__jkind { WORKER__J_CHILD = 1, WORKER__J_SHM = 2 };

struct worker__jentry {
    enum worker__jkind kind;
    struct worker__child c;     /* CHILD: the survivor, with pidfd and mailbox;
                                   SHM: only c.shm_name is used */
};

#define WORKER__JOURNAL_MAX (2 * WORKER_MAX_CHILDREN)

/* ---- the worker ----
 *
 * Where runtime part 2 (dispatch, issue 4) plugs in without reshaping this:
 * - frame 1 of every mailbox is the task frame (TASK_READY/TASK_DONE with
 *   the error tuple first), and the child's serve loop already parks on the
 *   bell that a parent store rings; a task handler goes next to
 *   handle_control() in child.c (points task_begin/task_end exist);
 * - the progress owner waits exactly like the barrier: one ppoll over the
 *   doorbell eventfd (children ring it after TASK_DONE/CONTROL_DONE) and the
 *   pidfds of the children with work in flight, so a child that dies
 *   mid-task is seen at once with its wait status (no liveness period);
 * - sub callbacks are registered before init (fork copies the table), like
 *   opt.sub_init; chip kernels are device.h's table; next-level targets are
 *   the stable ids worker_add_child() returns;
 * - a scheduler thread, if any, starts after the last fork of worker__start.
 */

struct worker {
    worker_options opt;
    worker_script *sub_scripts;
    worker_script *chip_scripts;
    char (*sub_msgs)[WORKER_ERROR_MAX];  /* copied script texts */
    char (*chip_msgs)[WORKER_ERROR_MAX];
    char self_msg[WORKER_ERROR_MAX];
    char *faults;

    _Atomic int state;          /* worker_state */
    _Atomic int cancel;         /* set by a concurrent close() */
    _Atomic uint32_t init_running; /* futex word: 1 while worker_init() runs */
    pid_t init_tid;             /* thread running worker_init() */

    worker *parent;             /* attached as a next-level child of */
    unsigned next_id;
    worker *next[WORKER_MAX_NEXT];
    unsigned n_next;

    bool is_root;
    bool owns_gates;
    worker_gates *gates;

    /* Namespace: "/wk-<rootpid>-<token>-" + path ("" or "n1." …). */
    char ns_root[48];
    char ns_path[48];
    char prefix[WORKER__NAME_MAX];

    int64_t deadline_ns;        /* startup epoch deadline */
    int doorbell_fd;            /* eventfd children ring, -1 */

    size_t n_children;
    struct worker__child children[WORKER_MAX_CHILDREN];

    size_t n_orphan_groups;     /* process groups whose leader we reaped */
    pid_t orphan_groups[WORKER_MAX_CHILDREN];

    size_t n_journal;
    struct worker__jentry journal[WORKER__JOURNAL_MAX];

    worker_rollback_report rollback;
    char last_error[512];
    pthread_mutex_t lock;       /* guards state transitions vs close() */
};

/* tree.c: fork, barrier, rollback, reap, close of one worker's children. */
/* Run one startup epoch (fork groups + barriers); on failure roll back.
   The caller owns the lifecycle state. */
int worker__start(worker *w);
/* Two-phase shutdown of every child, then the journal. 0 or -ETIMEDOUT. */
int worker__teardown(worker *w);
/* True while children are alive or the journal holds entries. */
bool worker__has_live_resources(const worker *w);
/* Init of a nested worker inside a next-level child (no lock, no threads). */
int worker__init_nested(worker *w);

/* child.c */
_Noreturn void worker__child_main(worker *parent, struct worker__child *c,
                                  pid_t ppid_before_fork);
_Noreturn void worker__child_exit(int code);

/* device_sim.c via device.h */

/* shm.c */
int worker__ns_init(worker *w);
int worker__shm_sweep(const char *prefix, const char *const *protect,
                      size_t n_protect);

#endif /* WORKER_INTERNAL_H */
