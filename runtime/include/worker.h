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
 * worker_close() shuts the tree down in two phases and converges in one call
 * after any rollback.
 *
 * Conventions:
 *   - Functions returning int give 0 (or a documented non-negative value) on
 *     success and a negative errno value on failure. The runtime never prints
 *     and never exits the caller; a human-readable message of the last
 *     failure is kept per handle (worker_last_error()).
 *   - Outputs are untouched on failure.
 *   - A worker handle is used by one thread at a time, except that
 *     worker_close() may be called from another thread while worker_init()
 *     runs (it cancels the init cooperatively). The thread that called
 *     worker_init() must outlive the tree: children get a parent-death
 *     signal when that thread exits.
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
#define WORKER_MAX_CHILDREN (WORKER_MAX_SUBS + WORKER_MAX_CHIPS + WORKER_MAX_NEXT)
#define WORKER_ERROR_MAX 256      /* bytes of a child's error text, with NUL */
#define WORKER_GATES_COUNT 64     /* gates in one worker_gates set */

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
    WORKER_SCRIPT_OK = 0,          /* normal init */
    WORKER_SCRIPT_FAIL,            /* init fails with msg (default text if NULL) */
    WORKER_SCRIPT_HANG,            /* never finishes init; cancellable by SIGTERM */
    WORKER_SCRIPT_SLOW_FAIL,       /* waits arg ms (cancellable), then fails */
    WORKER_SCRIPT_EXIT,            /* _exit(arg) during init, publishes nothing */
    WORKER_SCRIPT_CRASH,           /* dies by SIGSEGV during init */
    WORKER_SCRIPT_IGNORE_SIGTERM,  /* ignores SIGTERM and hangs: needs SIGKILL */
    WORKER_SCRIPT_FORK_GRANDCHILD, /* forks a grandchild in its process group,
                                      then both ignore SIGTERM and hang */
    WORKER__SCRIPT_COUNT
} worker_script_kind;

typedef struct worker_script {
    worker_script_kind kind;
    int arg;          /* SLOW_FAIL: delay in ms (0..3600000); EXIT: code (0..255) */
    const char *msg;  /* FAIL, SLOW_FAIL: error text, copied (truncated to 255 B) */
} worker_script;

#define WORKER_SCRIPT_INIT { WORKER_SCRIPT_OK, 0, NULL }

/*
 * Parse a script name as used by specs and tests: "ok", "fail", "fail(msg)",
 * "hang", "slow_fail(ms)", "exit(n)", "crash", "ignore_sigterm",
 * "fork_grandchild". `len` is the length of `text`. On success *out->msg
 * points into `text` (not NUL-terminated: msg_len gives its length).
 * Returns 0 or -EINVAL.
 */
int worker_script_parse(const char *text, size_t len, worker_script *out,
                        size_t *msg_len);

/*
 * Init hook of sub children, run in each sub child during its setup (the C
 * counterpart of building a sub worker's identity tables). Return 0 on
 * success, or non-zero after writing a message into msg (size msg_size):
 * the child then publishes INIT_FAILED with "sub_worker: <msg>".
 */
typedef int (*worker_sub_init_fn)(void *arg, unsigned index, char *msg,
                                  size_t msg_size);

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
       broadcast; the last part of it is spent on SIGKILL escalation. */
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
       child's setup point fails its init; at the parent's "reap" point it
       makes an exited child count as not reapable yet (it is journaled).
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
} worker_options;

#define WORKER_OPTIONS_INIT                                                \
    { 3, 0, 0, 300.0, 10.0, 60.0, NULL, NULL, WORKER_SCRIPT_INIT, NULL,     \
      NULL, 0, 0, NULL, NULL }

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
 * or: -EINPROGRESS (already initializing), -EALREADY (already READY),
 * -EPERM (FAILED: close it and create a new one; or attached as a child),
 * -ESHUTDOWN (closed), -ETIMEDOUT (startup deadline), -ECANCELED (a
 * concurrent worker_close()), -EIO (a child failed or exited; the message
 * carries the child's text), or a resource error. On failure the epoch has
 * been rolled back (see worker_last_rollback()) and the worker is FAILED.
 */
int worker_init(worker *w);

/*
 * Close. Publishes CLOSED at once (absorbing), broadcasts SHUTDOWN (sticky
 * word first) to every child, then reaps all of them interleaved under one
 * deadline that starts after the broadcast; survivors are SIGKILLed and
 * reaped (bounded, blocking) before the deadline. Mailboxes are freed only
 * after their child is reaped. The cleanup journal (survivors of an earlier
 * rollback or close) is driven the same way. Returns 0 when nothing is left,
 * or -ETIMEDOUT / -EBUSY when something could not be reclaimed (kept in the
 * journal; a later worker_close() retries). Closing a NEW or CLOSED worker
 * with an empty journal returns 0. While another thread runs worker_init(),
 * close cancels it and waits for it to unwind (bounded by close_timeout_s):
 * -ETIMEDOUT if it did not. -EDEADLK from the thread running the init.
 */
int worker_close(worker *w);

/* Close if needed (best effort) and free; accepts NULL. */
void worker_free(worker *w);

worker_state worker_get_state(const worker *w);
int worker_level(const worker *w);

/* The message of the last failure on this handle, "" if none. */
const char *worker_last_error(const worker *w);

/*
 * Pids of the live (forked, not yet reaped) direct children of one kind,
 * in index order. Writes at most n pids and returns how many there are.
 */
size_t worker_child_pids(const worker *w, worker_child_kind kind,
                         pid_t *pids, size_t n);

/* Pipeline depth chip `index` advertised in INIT_READY, or -ENOENT. */
int worker_chip_pipeline_depth(const worker *w, unsigned index);

/* The attached next-level child with this id, or NULL. */
worker *worker_next_child(worker *w, unsigned id);

/* What happened to each child in the last startup rollback. */
typedef enum worker_disposition {
    WORKER_DISP_GRACEFUL = 0, /* was READY, left after SHUTDOWN */
    WORKER_DISP_CANCELLED,    /* was in init, left after the cooperative SIGTERM */
    WORKER_DISP_EXITED,       /* had already exited (failed, crashed) */
    WORKER_DISP_KILLED,       /* needed SIGKILL */
    WORKER_DISP_JOURNALED,    /* not reaped within the budget: in the journal */
} worker_disposition;

typedef struct worker_rollback_entry {
    worker_child_kind kind;
    unsigned index;
    pid_t pid;
    worker_disposition disposition;
    int wait_status;          /* valid unless JOURNALED */
} worker_rollback_entry;

typedef struct worker_rollback_report {
    bool happened;            /* false until a rollback ran */
    unsigned graceful, cancelled, exited, killed, journaled; /* counts */
    size_t n;
    worker_rollback_entry entries[WORKER_MAX_CHILDREN];
} worker_rollback_report;

/* Copy the report of the last rollback; -ENOENT if none ran. */
int worker_last_rollback(const worker *w, worker_rollback_report *out);

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
