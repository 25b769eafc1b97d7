/* SPDX-License-Identifier: MIT */
/*
 * worker.h — the one public header of libworker.
 *
 * libworker re-implements the hierarchical Worker lifecycle of
 * hw-native-sys/simpler in C, on a simulated device backend:
 *
 *   L3  forks sub children and chip children (simulated devices);
 *   L4+ forks sub children and next-level children, each of which runs a
 *       nested init of its own subtree before it reports ready.
 *
 * A worker is an opaque handle. Its lifecycle is
 *
 *   NEW --worker_init()--> INITIALIZING --> READY | FAILED
 *   any --worker_close()--> CLOSED (absorbing)
 *
 * worker_init() forks the tree in the order sub -> chip -> next-level, each
 * group followed by a readiness barrier with one absolute deadline for the
 * whole startup epoch. Any failure rolls the epoch back (SHUTDOWN to ready
 * children, cooperative SIGTERM to children still in init, SIGKILL of the
 * rest and of their process groups) and leaves the worker FAILED.
 * worker_close() drains runs in flight, then shuts the tree down in two
 * phases and converges in one call after any rollback.
 *
 * Dispatch (runtime part 2): worker_run() / worker_submit() + worker_wait()
 * call a user orchestration function on the caller's thread; it submits
 * tasks to sub workers (C callbacks registered before init), to simulated
 * chips (kernels by id over simulated device memory) and to next-level
 * workers (by the stable id worker_add_child() returned; the child runs an
 * orchestration function registered on it, against its own subtree). One
 * scheduler thread per READY worker, started by its first run, control or
 * device call (a worker that is only started and closed runs none), owns
 * progress: it fills each child's ring of task slots, collects TASK_DONE,
 * and watches every child through its pidfd, so a child that dies
 * mid-task fails its run at once with its wait status. While it is parked,
 * a thread waiting for a run takes that pass in its place, under the same
 * lock (one owner at a time), and the child that completes the task wakes
 * that thread directly: a round trip is two hand-offs. A child serves
 * every task its ring holds per wake-up, and is woken only when it parked
 * on an empty ring. Tasks to one
 * target run in submission order; a failed task poisons its dependents;
 * the first error of a run wins, later submits of that run fail fast, and
 * the next run starts clean. Error text is chained across levels with the
 * stable prefixes "sub_worker: ", "chip dev=N: " and "child_worker
 * level=L: ", each hop truncated to 255 bytes.
 *
 * Conventions:
 *   - Functions returning int give 0 (or a documented non-negative value) on
 *     success and a negative errno value on failure. The runtime never prints
 *     and never exits the caller; a human-readable message of the last
 *     failure is kept per handle (worker_last_error()).
 *   - Outputs are untouched on failure.
 *   - Threads: worker_close() may be called from another thread while
 *     worker_init() runs (it cancels the init cooperatively). Other threads
 *     that call worker_init(), worker_submit()/worker_run(),
 *     worker_control() or the device memory calls while an init is in
 *     progress wait for that startup epoch and get its outcome: on failure
 *     every one of them returns the same original error (same code; the
 *     text is worker_startup_error()). Once READY, runs, controls and
 *     device calls may come from several threads at once; worker_close()
 *     drains them. worker_last_error() is per handle: with several threads
 *     on one handle prefer worker_job_error() and the return codes. The
 *     thread that called worker_init() must outlive the tree: children get
 *     a parent-death signal when that thread exits. worker_free() must not
 *     race with any other call on the handle.
 *   - Children are forked from the calling process: call worker_init()
 *     before starting threads of your own that could hold locks.
 *
 * Environment:
 *   WORKER_FAULTS  fault points to arm, same syntax as worker_options.faults;
 *                  read by worker_init() of a root worker, appended after the
 *                  options' own spec.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct worker worker;
typedef struct worker_gates worker_gates;

/* Limits, checked up front by worker_new() and worker_add_child(). */
#define WORKER_LEVEL_MIN 3
#define WORKER_LEVEL_MAX 7
#define WORKER_MAX_SUBS 64
#define WORKER_MAX_CHIPS 64
#define WORKER_MAX_NEXT 16
#define WORKER_MAX_CHILDREN \
    (WORKER_MAX_SUBS + WORKER_MAX_CHIPS + WORKER_MAX_NEXT)
#define WORKER_ERROR_MAX 256    /* bytes of a child's error text, with NUL */
#define WORKER_GATES_COUNT 64   /* gates in one worker_gates set */
#define WORKER_MAX_CALLABLES 64 /* sub / orchestration callables per worker */
#define WORKER_CALLABLE_NAME_MAX 32 /* bytes of a callable's name, with NUL */
#define WORKER_TASK_ARGS_MAX 3072 /* bytes of a sub / next-level task's blob */
#define WORKER_KERNEL_ARGS_MAX 6  /* arguments of a chip kernel */
#define WORKER_DEVICE_ALLOC_MAX (1u << 30) /* bytes of one device allocation */
#define WORKER_ANY (-1)                    /* sub target: any idle sub worker */
#define WORKER_WAIT_FOREVER (-1.0)         /* timeout: none */

/* Lifecycle states. */
typedef enum worker_state {
    WORKER_NEW = 0,
    WORKER_INITIALIZING = 1,
    WORKER_READY = 2,
    WORKER_FAILED = 3,
    WORKER_CLOSED = 4,
} worker_state;

/* "NEW", "INITIALIZING", … */
const char *worker_state_name(worker_state state);

/* Kinds of children. */
typedef enum worker_child_kind {
    WORKER_CHILD_SUB = 0,  /* runs registered callbacks */
    WORKER_CHILD_CHIP = 1, /* a simulated device (L3 only) */
    WORKER_CHILD_NEXT = 2, /* a next-level worker (L4+) */
} worker_child_kind;

/* "sub", "chip", "next". */
const char *worker_child_kind_name(worker_child_kind kind);

/*
 * What a child's init does: the C counterpart of simpler's fake-chip scripts
 * and of the init functions its tests patch in. A sub or chip child runs
 * its script in place of (chip: before) its normal init; a next-level child
 * runs it before it starts its own nested tree.
 */
typedef enum worker_script_kind {
    WORKER_SCRIPT_OK = 0,    /* normal init */
    WORKER_SCRIPT_FAIL,      /* init fails with msg (default text if NULL) */
    WORKER_SCRIPT_HANG,      /* never finishes init; cancellable by SIGTERM */
    WORKER_SCRIPT_SLOW_FAIL, /* waits arg ms (cancellable), then fails */
    WORKER_SCRIPT_EXIT,      /* _exit(arg) during init, publishes nothing */
    WORKER_SCRIPT_CRASH,     /* dies by SIGSEGV during init */
    WORKER_SCRIPT_IGNORE_SIGTERM, /* ignores SIGTERM and hangs: needs SIGKILL */
    WORKER_SCRIPT_FORK_GRANDCHILD, /* forks a grandchild in its process group,
                                      then both ignore SIGTERM and hang */
    WORKER_SCRIPT_KIND_COUNT
} worker_script_kind;

/* Ranges of a script's argument. */
#define WORKER_SCRIPT_DELAY_MAX_MS 3600000 /* slow_fail(ms): 0..this */
#define WORKER_SCRIPT_EXIT_MAX 255         /* exit(n): 0..this */

typedef struct worker_script {
    worker_script_kind kind;
    int arg; /* SLOW_FAIL: delay in ms (0..WORKER_SCRIPT_DELAY_MAX_MS);
                         EXIT: code (0..WORKER_SCRIPT_EXIT_MAX) */
    const char
        *msg; /* FAIL, SLOW_FAIL: error text, copied (truncated to 255 B) */
} worker_script;

/* The *_INIT macros name their fields in C (a field added to a struct
   cannot shift them); C++ before C++20 has no designators, so it gets
   the same values in declaration order. */
#ifdef __cplusplus
#define WORKER_SCRIPT_INIT        \
    {                             \
        WORKER_SCRIPT_OK, 0, NULL \
    }
#else
#define WORKER_SCRIPT_INIT                              \
    {                                                   \
        .kind = WORKER_SCRIPT_OK, .arg = 0, .msg = NULL \
    }
#endif

/*
 * Parse a script as used by specs and tests: "ok", "fail", "fail(msg)",
 * "hang", "slow_fail(ms)", "exit(n)", "crash", "ignore_sigterm",
 * "fork_grandchild". `len` is the length of `text` (no NUL needed; a NUL
 * byte inside it is an error). Numbers are decimal digits only, range
 * checked (never wrapped); a message may hold up to WORKER_ERROR_MAX - 1
 * bytes (longer is an error, not cut) and "fail()" means "fail". On
 * success *out is set and out->msg points into `text` (not NUL-terminated:
 * *msg_len gives its length; msg_len may be NULL). Returns 0, or -EINVAL
 * with a message naming the script and what is wrong in err (if err_size >
 * 0; *out untouched).
 */
int worker_script_parse(const char *text, size_t len, worker_script *out,
                        size_t *msg_len, char *err, size_t err_size);

/*
 * Init hook of sub children, run in each sub child during its setup (the C
 * counterpart of building a sub worker's identity tables). Return 0 on
 * success, or non-zero after writing a message into msg (size msg_size):
 * the child then publishes INIT_FAILED with "sub_worker: <msg>".
 */
typedef int (*worker_sub_init_fn)(void *arg, unsigned index, char *msg,
                                  size_t msg_size);

/* What worker_close() does with device memory the caller never freed. */
typedef enum worker_device_leaks {
    /* Reclaim it (the chip unlinks it at shutdown) and name it in
       worker_last_error(). */
    WORKER_DEVICE_LEAKS_RECLAIM = 0,
    /* Leave it in /dev/shm, named in worker_last_error(), so that a leak
       checker (the fixture's shm ledger) reports it as the caller's leak;
       worker_device_free() still releases it after close. */
    WORKER_DEVICE_LEAKS_KEEP = 1,
} worker_device_leaks;

/* Options of worker_new(). Initialise with WORKER_OPTIONS_INIT. */
typedef struct worker_options {
    /* Level label, WORKER_LEVEL_MIN..MAX. L3 may have chips; L4+ may have
       next-level children (worker_add_child) but no chips. */
    int level;
    /* Sub children to fork, 0..WORKER_MAX_SUBS. */
    unsigned num_subs;
    /* Simulated chips to fork (simpler's device_ids), L3 only,
       0..WORKER_MAX_CHIPS. */
    unsigned num_chips;
    /* Budget of the whole startup epoch in seconds, finite and > 0.
       Nested workers use min(parent's deadline, own). */
    double startup_timeout_s;
    /* Budget of a startup rollback (graceful phase, SIGKILL, reap), s. */
    double rollback_timeout_s;
    /* Budget of worker_close()'s reap, starting after the SHUTDOWN
       broadcast; the last part of it is spent on SIGKILL escalation. In a
       next-level child shut down by its parent (close or rollback) it
       also ends when the parent's graceful wait does, if that is earlier:
       the child kills and reaps its own subtree before its parent would
       escalate. */
    double close_timeout_s;
    /* Scripts per sub child / per chip child (arrays of num_subs /
       num_chips entries), or NULL for all "ok". Copied by worker_new(). */
    const worker_script *sub_scripts;
    const worker_script *chip_scripts;
    /* Script of this worker's own setup when it runs as a next-level child
       of another worker; ignored for a root. */
    worker_script self_script;
    /* Optional init hook of sub children and its argument (inherited by
       the children across fork, so arg may point to MAP_SHARED memory). */
    worker_sub_init_fn sub_init;
    void *sub_init_arg;
    /* Device memory of each simulated chip in bytes (a shm region created by
       the chip), 4096..(1 << 30); 0: 64 KiB. */
    size_t chip_memory_bytes;
    /* Pipeline depth each chip advertises in INIT_READY, 1..8; 0: 1. */
    unsigned chip_pipeline_depth;
    /* Fault points to arm, e.g.
         "next.1:after_init_failed=gate_wait(0); root:rollback_after_sigterm=gate_open(0)"
       Grammar: entries separated by ';', each ROLE:POINT=ACTION['+'ACTION…].
       ROLE is a glob over role paths: "root", "sub.0", "chip.1", "next.1",
       "next.1/chip.0", "chip.*", "*". POINT is one of the names listed by
       worker_fault_point_name(). ACTION is delay(ms), hang, fail(msg),
       exit(n), sigterm, sigkill, signal_parent(sig), gate_wait(i),
       gate_open(i), gate_fail(i) (fail while gate i is closed). A fail at a
       child's setup point fails its init; at task_begin / task_end it
       fails the task (with the child's prefix); at control it fails the
       command; at the parent's "reap" point it makes an exited child count
       as not reapable yet (it is journaled). init_wait fires in the root
       when a caller starts waiting for a startup epoch in progress.
       Points run in the process whose role matches: child points (setup_*,
       after_init_*, serve_shutdown, task_*, control) in the child, the
       others in the worker that owns the children ("root", or "next.1" for
       a nested worker). Copied; NULL for none. Only a root reads it; nested
       workers inherit the root's table. The table is per process: the last
       root initialised in a process arms it. */
    const char *faults;
    /* Gates the fault actions wait on / open; NULL: an internal set is
       created when a fault names a gate. Not owned. */
    worker_gates *gates;
    /* Budget of worker_close()'s drain of runs in flight, in seconds, finite
       and > 0. On expiry close() returns -ETIMEDOUT and tears nothing down;
       a later close() drains again (simpler's 10 s). */
    double drain_timeout_s;
    /* Device memory not freed by the caller at close (see above). */
    worker_device_leaks device_leaks;
} worker_options;

#ifdef __cplusplus
#define WORKER_OPTIONS_INIT                                               \
    {                                                                     \
        3, 0, 0, 300.0, 10.0, 60.0, NULL, NULL, WORKER_SCRIPT_INIT, NULL, \
            NULL, 0, 0, NULL, NULL, 10.0, WORKER_DEVICE_LEAKS_RECLAIM     \
    }
#else
#define WORKER_OPTIONS_INIT                                                  \
    {                                                                        \
        .level = 3, .startup_timeout_s = 300.0, .rollback_timeout_s = 10.0,  \
        .close_timeout_s = 60.0, .self_script = WORKER_SCRIPT_INIT,          \
        .drain_timeout_s = 10.0, .device_leaks = WORKER_DEVICE_LEAKS_RECLAIM \
    }
#endif

/*
 * Check options without creating anything. Returns 0 or -EINVAL and writes
 * a message naming the offending field into msg (if msg_size > 0).
 */
int worker_options_validate(const worker_options *opt, char *msg,
                            size_t msg_size);

/*
 * Create a NEW worker. opt NULL means WORKER_OPTIONS_INIT. Validates every
 * option (worker_options_validate); nothing is forked or created in /dev/shm.
 * Returns 0, -EINVAL, or -ENOMEM.
 */
int worker_new(worker **ret, const worker_options *opt);

/*
 * Attach `child` (NEW, level == parent's level - 1, not attached anywhere)
 * as a next-level child of `parent` (NEW, level >= 4, not itself attached).
 * On success the parent owns the child: worker_free(parent) frees it, and
 * the child can no longer be initialized or closed on its own. Returns the
 * child's stable next-level id (0, 1, …) or -EINVAL (self, NULL, level),
 * -EBUSY (a worker not NEW), -EEXIST (child already attached), -EPERM
 * (parent attached as a child), -ENOSPC (WORKER_MAX_NEXT reached).
 */
int worker_add_child(worker *parent, worker *child);

/*
 * Start the tree and wait until every child is READY. Returns 0 (READY),
 * or: -EALREADY (already READY), -EPERM (FAILED: close it and create a new
 * one; or attached as a child), -ESHUTDOWN (closed), -ETIMEDOUT (startup
 * deadline), -ECANCELED (a concurrent worker_close()), -EIO (a child failed
 * or exited; the message carries the child's text), -EINVAL (a registered
 * callable has no eligible dispatch target; nothing is forked), or a
 * resource error. On failure the epoch has been rolled back (see
 * worker_last_rollback()) and the worker is FAILED. A refusal before the
 * epoch starts — a callable without target or SIGCHLD ignored (-EINVAL),
 * a bad WORKER_FAULTS, a shm prefix too long, no descriptor for
 * the doorbell — starts nothing and leaves the worker NEW, with the reason
 * in worker_last_error(): fix the cause and call worker_init() again.
 *
 * Called from another thread while an init is in progress, it waits for
 * that epoch and returns its outcome: 0 if it reached READY, otherwise the
 * same code the initializing thread got (the original failure, whose text
 * is worker_startup_error()), not "in progress". -EINPROGRESS only if the
 * initializing thread itself re-enters.
 */
int worker_init(worker *w);

/* The message of the failed startup epoch ("" if none): the original
   failure every waiter of that epoch got. Immutable once FAILED. */
const char *worker_startup_error(const worker *w);

/*
 * Close. Publishes CLOSED at once (absorbing: new runs, controls and device
 * calls are refused), then drains runs in flight (orchestration functions
 * still running and tasks submitted by any run, waited for or not) within
 * drain_timeout_s. If they do not drain, close returns -ETIMEDOUT, names
 * them in worker_last_error() and tears nothing down: the tree stays intact
 * and a later worker_close() drains again and then converges. Control
 * commands in flight are failed with -ESHUTDOWN, not waited for. Then it
 * stops the scheduler, broadcasts SHUTDOWN (sticky word first) to every
 * child, and reaps all of them interleaved under one deadline that starts
 * after the broadcast; survivors are SIGKILLed and reaped (bounded,
 * blocking) before the deadline. Mailboxes are freed only after their child
 * is reaped. The cleanup journal (survivors of an earlier rollback or close)
 * is driven the same way. Returns 0 when nothing is left (abnormal exits
 * and device memory the caller never freed are named in
 * worker_last_error(); see worker_last_close()), or -ETIMEDOUT / -EBUSY
 * when something could not be reclaimed (kept in the journal; a later
 * worker_close() retries). Closing a NEW or CLOSED worker with an empty
 * journal returns 0. While another thread runs worker_init(), close cancels
 * it and waits for it to unwind (bounded by close_timeout_s): -ETIMEDOUT if
 * it did not. -EDEADLK from the thread running the init, or from inside an
 * orchestration function of this worker.
 */
int worker_close(worker *w);

/* Close if needed and free; accepts NULL. If runs still do not drain, it
   abandons them (their tasks fail with -ESHUTDOWN) and tears the tree down
   anyway. Job handles of this worker become invalid. */
void worker_free(worker *w);

worker_state worker_get_state(const worker *w);
int worker_level(const worker *w);

/* The message of the last failure on this handle, "" if none. */
const char *worker_last_error(const worker *w);

/*
 * Pids of the live (forked, not yet reaped) direct children of one kind,
 * in index order. Writes at most n pids and returns how many there are.
 */
size_t worker_child_pids(const worker *w, worker_child_kind kind, pid_t *pids,
                         size_t n);

/* Pipeline depth chip `index` advertised in INIT_READY, or -ENOENT. */
int worker_chip_pipeline_depth(const worker *w, unsigned index);

/* The attached next-level child with this id, or NULL. */
worker *worker_next_child(worker *w, unsigned id);

/* What happened to each child in the last startup rollback. */
typedef enum worker_disposition {
    WORKER_DISP_GRACEFUL = 0, /* was READY, left after SHUTDOWN */
    WORKER_DISP_CANCELLED, /* was in init, left after the cooperative SIGTERM */
    WORKER_DISP_EXITED,    /* had already exited (failed, crashed) */
    WORKER_DISP_KILLED,    /* needed SIGKILL */
    WORKER_DISP_JOURNALED, /* not reaped within the budget: in the journal */
} worker_disposition;

typedef struct worker_rollback_entry {
    worker_child_kind kind;
    unsigned index;
    pid_t pid;
    worker_disposition disposition;
    int wait_status;        /* valid unless JOURNALED */
    uint32_t mailbox_state; /* base-frame state word when reaped (close) */
} worker_rollback_entry;

typedef struct worker_rollback_report {
    bool happened; /* false until a rollback ran */
    unsigned graceful, cancelled, exited, killed, journaled; /* counts */
    size_t n;
    /* One per child; a worker has at most WORKER_MAX_CHILDREN, so no
       child is ever left out. */
    worker_rollback_entry entries[WORKER_MAX_CHILDREN];
} worker_rollback_report;

/* Copy the report of the last rollback; -ENOENT if none ran. */
int worker_last_rollback(const worker *w, worker_rollback_report *out);

/*
 * Copy the report of the last close() that tore children down, same shape:
 * GRACEFUL (left after SHUTDOWN), EXITED (had died before the close, e.g.
 * mid-task), KILLED (needed SIGKILL), JOURNALED; mailbox_state is the base
 * state word the child left behind (e.g. CONTROL_DONE = 5 when a control
 * reply clobbered SHUTDOWN = 3 and the sticky word ended it anyway).
 * -ENOENT if no close tore children down.
 */
int worker_last_close(const worker *w, worker_rollback_report *out);

/* Entries (children, shm names) waiting in the cleanup journal. */
size_t worker_journal_size(const worker *w);

/*
 * Unlink /dev/shm objects of this library (prefix "wk-") left by root
 * processes that are dead, owned by the calling user only. Returns the
 * number unlinked or a negative errno.
 */
int worker_reclaim_stale(void);

/*
 * The shm prefix of a worker's tree ("/wk-<rootpid>-<token>-"), set by
 * worker_init(); "" before. Every shm object of the tree starts with it.
 */
const char *worker_shm_prefix(const worker *w);

/* ---- Dispatch: callables, runs, tasks ---- */

typedef struct worker_job worker_job;

/*
 * A sub callable: runs in a sub child with the task's argument blob (copied
 * into its task slot, at most WORKER_TASK_ARGS_MAX bytes). Return 0, or a
 * non-zero code after writing a message into msg: the task fails with
 * "sub_worker: <msg>". It runs in the forked child: `arg` must be valid
 * there (static, or MAP_SHARED memory mapped before init), and it must not
 * call libworker on the parent's handles.
 */
typedef int (*worker_sub_fn)(void *arg, const void *args, size_t len, char *msg,
                             size_t msg_size);

/*
 * An orchestration function: builds a run's task graph with
 * worker_submit_*() on the calling thread (of the root's caller, or of a
 * next-level child for a task submitted to it). Return 0, or a negative
 * errno (worker_job_fail() attaches a message): the submission fails
 * synchronously with that code and message, not wrapped.
 */
typedef int (*worker_orch_fn)(worker_job *job, void *arg);

/*
 * Register a callable on a NEW worker (a root, or a next-level child
 * attached but not yet initialized): callables are copied into the
 * children when they are forked, so the table is frozen at init. Sub
 * callables run in this worker's sub children; orchestration callables
 * run in this worker when it is a next-level child and its parent submits
 * to it (worker_submit_next). Returns the callable's id (0, 1, … per kind)
 * or -EINVAL (NULL fn, name longer than WORKER_CALLABLE_NAME_MAX - 1),
 * -ENOSPC (WORKER_MAX_CALLABLES), -EBUSY (INITIALIZING or READY: register
 * before init), -EPERM (FAILED), -ESHUTDOWN (CLOSED). worker_init() rejects
 * a sub callable on a worker without sub children (no eligible target).
 */
int worker_register_sub(worker *w, const char *name, worker_sub_fn fn,
                        void *arg);
int worker_register_orch(worker *w, const char *name, worker_orch_fn fn,
                         void *arg);

/*
 * Run `fn` (an orchestration function) on a READY worker: worker_submit(),
 * then worker_wait() forever, then worker_job_free(). Returns 0, the
 * orchestration function's own code, or worker_wait()'s.
 */
int worker_run(worker *w, worker_orch_fn fn, void *arg);

/*
 * Start a run: call fn(job, arg) on this thread and return once it has
 * returned, with its tasks in flight. *ret gets the job handle (free it
 * with worker_job_free()). Returns 0; fn's own non-zero code (the tasks it
 * submitted still run; *ret untouched); -EPERM (NEW: not initialized;
 * FAILED), -ESHUTDOWN (CLOSED); -EAGAIN (the worker's first run, control
 * or device call could not start its scheduler thread; nothing was
 * submitted, the next call tries again); or, when it waited for an init
 * in progress that failed, that init's original code.
 */
int worker_submit(worker *w, worker_orch_fn fn, void *arg, worker_job **ret);

/*
 * Wait until every task of the job is done. timeout_s: finite and >= 0
 * (0 polls), or WORKER_WAIT_FOREVER; NaN, infinities and other negatives
 * are -EINVAL. Returns 0, -EIO (a task failed or its child died: the first
 * error, also in worker_job_error()), -ESHUTDOWN (the worker was freed or
 * its run abandoned), -ETIMEDOUT (still running; wait again). Waiting on a
 * finished job again returns the same result.
 */
int worker_wait(worker_job *job, double timeout_s);

/* Free a job handle; a job still in flight is detached (its tasks finish,
   and close() drains them). Accepts NULL. */
void worker_job_free(worker_job *job);

/* The job's first error ("" if none). */
const char *worker_job_error(const worker_job *job);

/* The worker a job runs on (for orchestration functions). */
worker *worker_job_worker(worker_job *job);

/* For a run started by a next-level task: its argument blob (NULL, 0 at a
   root). */
const void *worker_job_args(const worker_job *job, size_t *len);

/* Inside an orchestration function: record a message for the code it is
   about to return. Returns rc, so: return worker_job_fail(job, -EDOM, …). */
int worker_job_fail(worker_job *job, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A task of a run, as submitted by an orchestration function. */
typedef struct worker_task {
    worker_child_kind kind; /* SUB, CHIP or NEXT */
    /* SUB: sub index or WORKER_ANY; CHIP: chip index; NEXT: the id
       worker_add_child() returned. */
    int target;
    /* SUB: sub callable id; CHIP: kernel id (worker_kernel); NEXT: an
       orchestration callable id registered on that next-level worker. */
    unsigned callable;
    const void *args;      /* SUB, NEXT: blob copied at submit */
    size_t args_len;       /* 0..WORKER_TASK_ARGS_MAX */
    const uint64_t *kargs; /* CHIP: kernel arguments */
    unsigned nkargs;       /* 0..WORKER_KERNEL_ARGS_MAX */
    const int *deps;       /* ids of earlier tasks of this job */
    unsigned ndeps;
} worker_task;

#ifdef __cplusplus /* no designators before C++20 */
#define WORKER_TASK_INIT                                           \
    {                                                              \
        WORKER_CHILD_SUB, WORKER_ANY, 0, NULL, 0, NULL, 0, NULL, 0 \
    }
#else
#define WORKER_TASK_INIT                               \
    {                                                  \
        .kind = WORKER_CHILD_SUB, .target = WORKER_ANY \
    }
#endif

/*
 * Submit a task from inside the job's orchestration function (or while it
 * runs). Ordering: tasks of one job to one target (a sub index, chip,
 * next-level worker) run in submission order and each depends on the
 * previous one; WORKER_ANY tasks and explicit deps add dependencies. A task
 * whose dependency failed is not dispatched: it fails too (poisoned).
 * Returns the task id (0, 1, … per job), or -EINVAL (bad target, unknown
 * callable or kernel id, sizes, deps; nothing submitted), -EIO (the job
 * already failed: fail fast, worker_job_error() has the original message),
 * -EPERM (the orchestration function has returned), -ENOMEM.
 */
int worker_submit_task(worker_job *job, const worker_task *task);
int worker_submit_sub(worker_job *job, int sub, unsigned callable,
                      const void *args, size_t len);
int worker_submit_chip(worker_job *job, unsigned chip, unsigned kernel,
                       const uint64_t *kargs, unsigned nkargs);
int worker_submit_next(worker_job *job, unsigned worker_id, unsigned callable,
                       const void *args, size_t len);

/* Wait for one task of the job (same timeout rules as worker_wait()):
   0 done, -EIO failed (or poisoned), -ETIMEDOUT, -ENOENT no such task. */
int worker_task_wait(worker_job *job, int task, double timeout_s);

/* A finished task's scalar result (a chip kernel's, e.g. checksum).
   0, -EIO (failed), -EINPROGRESS, -ENOENT. */
int worker_job_result(const worker_job *job, int task, uint64_t *value);

/* ---- Simulated chips: kernels and device memory ---- */

/*
 * Kernels every simulated chip loads at init (before INIT_READY). Device
 * pointers address 32-bit elements: a worker_devptr is a region id (0: the
 * chip's base memory of chip_memory_bytes; others from worker_device_alloc)
 * and a byte offset in it. Counts are in elements.
 */
typedef enum worker_kernel {
    WORKER_KERNEL_VECTOR_ADD = 1, /* (a, b, c, n): c[i] = a[i] + b[i] */
    WORKER_KERNEL_FILL = 2,       /* (a, n, v):    a[i] = v */
    WORKER_KERNEL_CHECKSUM = 3,   /* (a, n):       result = sum of a[i] */
    WORKER_KERNEL_SLEEP = 4, /* (ms):         busy; ends early on SHUTDOWN */
    WORKER_KERNEL_FAIL = 5,  /* ():           fails with a message */
    WORKER_KERNEL_CRASH =
        6, /* (sig):        the chip dies by sig (default SEGV) */
    WORKER_KERNEL_NOOP = 7, /* ():           does nothing */
} worker_kernel;

typedef uint64_t worker_devptr;

#define WORKER_DEVPTR(region, offset) \
    (((uint64_t)(uint32_t)(region) << 32) | (uint32_t)(offset))
#define WORKER_DEVPTR_REGION(p) ((uint32_t)((uint64_t)(p) >> 32))
#define WORKER_DEVPTR_OFFSET(p) ((uint32_t)(p))

/*
 * Device memory of chip `chip` of a READY L3. An allocation is its own
 * shared-memory region created by the chip (so each is a named /dev/shm
 * object, attributable to the chip process); *out gets a device pointer to
 * its start. Copies go through the parent's mapping of the region and are
 * not ordered with tasks in flight: copy before submitting and after
 * waiting. Returns 0, -EINVAL (chip index, size 1..WORKER_DEVICE_ALLOC_MAX,
 * unknown pointer, range), -EIO (the chip failed the request or is gone),
 * -EPERM/-ESHUTDOWN (state), -ENOMEM. worker_device_free() works after the
 * chip died and after close(), so a kept leak can still be released.
 */
int worker_device_alloc(worker *w, unsigned chip, size_t size,
                        worker_devptr *out);
int worker_device_free(worker *w, unsigned chip, worker_devptr p);
int worker_device_copy_to(worker *w, unsigned chip, worker_devptr dst,
                          const void *src, size_t n);
int worker_device_copy_from(worker *w, unsigned chip, void *dst,
                            worker_devptr src, size_t n);
/* Allocations not freed yet (all chips). */
size_t worker_device_allocations(const worker *w);

/* ---- Control commands ---- */

/* Public commands are numbered from 0 without gaps; the runtime's own
   (device memory) have their own range from 0x100. */
typedef enum worker_control_cmd {
    WORKER_CONTROL_PING = 0,           /* result: the child's pid */
    WORKER_CONTROL_DEVICE_REGIONS = 1, /* chip: result = allocated regions */
} worker_control_cmd;

/*
 * Send a control command (CONTROL_REQUEST on the child's base frame) and
 * wait for CONTROL_DONE, for at most timeout_s (finite and >= 0, or
 * WORKER_WAIT_FOREVER). The scheduler issues it, serialised with the
 * child's tasks, and watches the child's liveness meanwhile. Returns 0 and
 * *result (may be NULL); -EIO (the child reported an error, or died: the
 * message says which); -ETIMEDOUT (no reply in time: the endpoint is
 * poisoned — its tasks and later commands fail fast and the child is told
 * to shut down); -ESHUTDOWN (close() ran while it was in flight); -ENOENT
 * (no such child); -EINVAL; -EPERM (not READY).
 */
int worker_control(worker *w, worker_child_kind kind, unsigned index,
                   worker_control_cmd cmd, uint64_t arg, double timeout_s,
                   uint64_t *result);

/* ---- Gates: shared futex words for deterministic interleavings ---- */

/*
 * A set of WORKER_GATES_COUNT gates in an anonymous MAP_SHARED page, so that
 * every process forked after its creation shares it. A gate is closed until
 * opened; fault action gate_wait(i) counts an arrival and blocks until gate
 * i is open; gate_open(i) opens it.
 */
int worker_gates_new(worker_gates **ret);
void worker_gates_free(worker_gates *g);
int worker_gate_open(worker_gates *g, unsigned i);
int worker_gate_reset(worker_gates *g, unsigned i); /* close, zero arrivals */
unsigned worker_gate_arrivals(const worker_gates *g, unsigned i);
/* Block until gate i has at least n arrivals or timeout_ms passed:
   0 or -ETIMEDOUT (-EINVAL for a bad index). */
int worker_gate_await_arrivals(worker_gates *g, unsigned i, unsigned n,
                               unsigned timeout_ms);

/* Names of the fault points, for specs ("setup_begin", …); NULL past the end. */
const char *worker_fault_point_name(unsigned point);

/*
 * A hook run at every fault point (before the armed actions) in every
 * process of the trees initialised after this call: children inherit it
 * across fork. Meant for race amplification (e.g. the fixture's
 * mpf_jitter()); it must be async-signal-safe and must not call libworker.
 * NULL removes it. With no hook, a disarmed point stays one branch.
 */
typedef void (*worker_fault_hook_fn)(unsigned point);
void worker_set_fault_hook(worker_fault_hook_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* WORKER_H */
