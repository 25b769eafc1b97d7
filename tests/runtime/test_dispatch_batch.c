/* SPDX-License-Identifier: MIT */
/*
 * test_dispatch_batch.c — batched dispatch (issue 32, part 4): a child
 * serves every task its ring holds per wake-up and is woken only when it
 * parked on an empty ring; the guarantees of one task at a time still
 * hold with batches: order per target, dependencies (a failed task skips
 * its dependents in the same ring and spares the other jobs there), a
 * completion that someone waits for is reported without waiting for the
 * end of the batch, a SHUTDOWN or a death in the middle of a batch fails
 * the rest of it, naming the child. Every case under the fixture's guard.
 *
 * The sub callable `step` is told by its blob what to do: record its
 * (job, index) in a log shared with the test, fail, or hold until the
 * test opens a futex word, which keeps a batch queued behind it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"
#include "testing.h" /* worker_child_task_wakeups() */

/* As many tasks as one ring holds (wire/mailbox.h, pinned by
   test_mailbox_atomics). */
#define RING 32

/* ---- a log and holds shared with the children ---- */

/* Words of the shared page: the log's entries written, its entries
   taken, the hold level the test has opened, the arrivals at holds, then
   the log. */
enum {
    LOG_N,
    LOG_TAKEN,
    HOLD_OPEN,
    HOLD_ARRIVALS,
    LOG_FIRST,
    WORDS = LOG_FIRST + 256
};

static _Atomic unsigned *shared; /* MAP_SHARED, made before init */

static long futex(_Atomic unsigned *word, int op, unsigned val,
                  const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

static void word_add(_Atomic unsigned *word, unsigned n)
{
    atomic_fetch_add(word, n);
    futex(word, FUTEX_WAKE, INT32_MAX, NULL);
}

/* Until *word >= at_least, or timeout_s: 0 or -ETIMEDOUT. */
static int word_await(_Atomic unsigned *word, unsigned at_least,
                      double timeout_s)
{
    double end = rt_now_s() + timeout_s;

    for (;;) {
        unsigned v = atomic_load(word);
        double left = end - rt_now_s();
        struct timespec ts;

        if (v >= at_least)
            return 0;
        if (left <= 0)
            return -ETIMEDOUT;
        ts.tv_sec = (time_t)left;
        ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
        futex(word, FUTEX_WAIT, v, &ts);
    }
}

enum step_action { RECORD, FAIL, HOLD };

/* A task's blob: what the step does; HOLD waits until the test opened
   hold level `level` (then records). */
struct step {
    uint32_t job, idx, action, level;
};

static unsigned logged(uint32_t job, uint32_t idx)
{
    return job * 1000 + idx + 1;
}

/* Byte i of a blob's padding after its step. */
static uint8_t pad_byte(const struct step *s, size_t i)
{
    return (uint8_t)(s->job * 31 + s->idx * 7 + i);
}

/* The sub callable (runs in the sub). The blob is a step, then padding
   whose bytes it checks. */
static int step(void *arg, const void *args, size_t len, char *msg, size_t size)
{
    const uint8_t *pad = (const uint8_t *)args + sizeof(struct step);
    struct step s;
    unsigned v;

    (void)arg;
    if (len < sizeof(s)) {
        snprintf(msg, size, "bad blob of %zu bytes", len);
        return -1;
    }
    memcpy(&s, args, sizeof(s));
    for (size_t i = 0; i < len - sizeof(s); i++)
        if (pad[i] != pad_byte(&s, i)) {
            snprintf(msg, size, "step %u.%u: padding byte %zu of %zu is wrong",
                     s.job, s.idx, i, len - sizeof(s));
            return -1;
        }
    if (s.action == HOLD) {
        word_add(&shared[HOLD_ARRIVALS], 1);
        while ((v = atomic_load(&shared[HOLD_OPEN])) < s.level)
            futex(&shared[HOLD_OPEN], FUTEX_WAIT, v, NULL);
    }
    /* Take an entry, write it, then count it written (and wake the test):
       whoever sees LOG_N at n finds n entries written among those taken. */
    unsigned at = atomic_fetch_add(&shared[LOG_TAKEN], 1);
    if (at < WORDS - LOG_FIRST)
        atomic_store(&shared[LOG_FIRST + at], logged(s.job, s.idx));
    word_add(&shared[LOG_N], 1);
    if (s.action == FAIL) {
        snprintf(msg, size, "step %u.%u failed", s.job, s.idx);
        return -1;
    }
    return 0;
}

static bool ran(uint32_t job, uint32_t idx)
{
    unsigned n = atomic_load(&shared[LOG_TAKEN]);

    for (unsigned i = 0; i < n && i < WORDS - LOG_FIRST; i++)
        if (atomic_load(&shared[LOG_FIRST + i]) == logged(job, idx))
            return true;
    return false;
}

static unsigned log_at(unsigned i)
{
    return atomic_load(&shared[LOG_FIRST + i]);
}

/* Let the holds of the next level go. */
static void open_hold(void)
{
    word_add(&shared[HOLD_OPEN], 1);
}

/* Until `n` steps in all have arrived at their hold. */
static void await_holds(unsigned n)
{
    assert_int_equal(word_await(&shared[HOLD_ARRIVALS], n, rt_bound_s(2.0)), 0);
}

/* ---- jobs of steps ---- */

/* A task of a plan: its sub, what it does, a task of the job it depends on
   (-1: none; a task always follows the job's earlier ones on its sub). */
struct spec {
    int sub;
    uint32_t action, level;
    int dep;
};

/* Job `job`: n tasks, task i as spec[i] (a RECORD on sub 0 past them);
   with pad, task i's blob carries pad(i) bytes of padding. */
struct plan {
    uint32_t job;
    unsigned n;
    const struct spec *spec;
    unsigned n_spec;
    size_t (*pad)(unsigned i);
};

static int plan_orch(worker_job *job, void *arg)
{
    const struct plan *p = arg;

    for (unsigned i = 0; i < p->n; i++) {
        struct spec sp = { 0, RECORD, 0, -1 };
        worker_task t = WORKER_TASK_INIT;

        if (i < p->n_spec)
            sp = p->spec[i];
        struct step s = { p->job, i, sp.action, sp.level };
        uint8_t blob[WORKER_TASK_ARGS_MAX];
        size_t pad = p->pad ? p->pad(i) : 0;

        memcpy(blob, &s, sizeof(s));
        for (size_t k = 0; k < pad; k++)
            blob[sizeof(s) + k] = pad_byte(&s, k);
        t.kind = WORKER_CHILD_SUB;
        t.target = sp.sub;
        t.callable = 0;
        t.args = blob;
        t.args_len = sizeof(s) + pad;
        if (sp.dep >= 0) {
            t.deps = &sp.dep;
            t.ndeps = 1;
        }
        int id = worker_submit_task(job, &t);
        if (id < 0)
            return id;
    }
    return 0;
}

static worker_job *submit(worker *w, const struct plan *p)
{
    worker_job *job;

    assert_int_equal(worker_submit(w, plan_orch, (void *)p, &job), 0);
    return job;
}

/* Job `job` of one task that holds sub 0 until hold level 1 opens: the
   tasks queued behind it are one batch. Returns once it is held. */
static worker_job *hold_sub0(worker *w, uint32_t job)
{
    static const struct spec hold = { 0, HOLD, 1, -1 };
    const struct plan p = { .job = job, .n = 1, .spec = &hold, .n_spec = 1 };
    worker_job *j = submit(w, &p);

    await_holds(1);
    return j;
}

static void shared_new(void)
{
    shared = rt_shared_counters(WORDS);
}

static void shared_free(void)
{
    rt_shared_free(shared, WORDS);
    shared = NULL;
}

static worker *sub_tree(const char *spec, const mpfw_options *o, mpfw_tree **t)
{
    worker *w;
    int rc;

    shared_new();
    assert_int_equal(mpfw_tree_new(t, spec, o), 0);
    w = mpfw_tree_root(*t);
    assert_int_equal(worker_register_sub(w, "step", step, NULL), 0);
    if ((rc = worker_init(w)))
        fail_msg("init of %s: %d %s", spec, rc, worker_last_error(w));
    return w;
}

static void end_case(mpfw_tree *t, worker_job **jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        worker_job_free(jobs[i]);
    assert_int_equal(mpfw_tree_close(t), 0);
    shared_free();
}

/* ---- one wake-up a batch ---- */

struct noops {
    unsigned chip, n;
};

static int noops_orch(worker_job *job, void *arg)
{
    const struct noops *p = arg;

    for (unsigned i = 0; i < p->n; i++) {
        int t = worker_submit_chip(job, p->chip, WORKER_KERNEL_NOOP, NULL, 0);
        if (t < 0)
            return t;
    }
    return 0;
}

/* Chip 0 is held at its first task's start (gate 0) while the others are
   queued, then let go; returns the bells rung for those tasks. */
static int64_t wakeups_for_held_noops(unsigned n)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = rt_fast_options();
    struct noops p = { 0, n };
    worker_job *job;

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = "chip.0:task_begin=gate_wait(0)";
    assert_int_equal(mpfw_tree_new(&t, "L3{chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_init(w), 0);
    int64_t before = worker_child_task_wakeups(w, WORKER_CHILD_CHIP, 0);
    assert_true(before >= 0);
    assert_int_equal(worker_submit(w, noops_orch, &p, &job), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    assert_int_equal(worker_gate_open(g, 0), 0);
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), 0);
    assert_int_equal(worker_gate_arrivals(g, 0), n);
    worker_job_free(job);
    int64_t wakeups = worker_child_task_wakeups(w, WORKER_CHILD_CHIP, 0) -
                      before;
    print_message("%u tasks queued on one chip: %lld wake-up(s)\n", n,
                  (long long)wakeups);
    assert_int_equal(mpfw_tree_close(t), 0);
    worker_gates_free(g);
    return wakeups;
}

/* A ring's worth of tasks queued while the chip is busy: all served on
   the wake-up of the first (a bell per task would be 32). */
static void queued_tasks_are_served_in_one_wake_up(void **state)
{
    assert_true(wakeups_for_held_noops(RING) <= 1);
}

/* Ten rings' worth: the first wake-up, then at most one per refill of a
   drained ring (the scheduler hears of a batch once, at its end, and then
   refills the whole ring). */
static void a_long_queue_costs_a_wake_up_per_ring_not_per_task(void **state)
{
    assert_true(wakeups_for_held_noops(10 * RING) <= 10);
}

/* ---- on one CPU ---- */

static int two_chip_noops(worker_job *job, void *arg)
{
    const unsigned *n = arg;

    for (unsigned i = 0; i < *n; i++) {
        int t = worker_submit_chip(job, i % 2, WORKER_KERNEL_NOOP, NULL, 0);
        if (t < 0)
            return t;
    }
    return 0;
}

/* Pinned to one CPU (taskset, a cpuset of one), a child yields that CPU
   where it would spin (child.c, spin_budget): the caller, the scheduler,
   a sub and two chips take turns on it. Two jobs of 100 tasks on the sub
   run whole and in order, and 2,000 tasks over both chips all complete. */
static void on_one_cpu_batches_run_whole_and_in_order(void **state)
{
    cpu_set_t was, one;
    int cpu = 0;
    unsigned n_noops = 2000;

    assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
    while (!CPU_ISSET(cpu, &was))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    /* This thread's: the scheduler thread and the children inherit it. */
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);

    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub,chip*2}", &o, &t);
    const struct plan a = { .job = 1, .n = 100 }, b = { .job = 2, .n = 100 };
    worker_job *jobs[3] = { submit(w, &a), submit(w, &b), NULL };

    assert_int_equal(worker_submit(w, two_chip_noops, &n_noops, &jobs[2]), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(worker_wait(jobs[i], rt_bound_s(10.0)), 0);
    assert_int_equal(atomic_load(&shared[LOG_N]), 200);
    for (unsigned i = 0; i < 100; i++) {
        assert_int_equal(log_at(i), logged(1, i));
        assert_int_equal(log_at(100 + i), logged(2, i));
    }
    end_case(t, jobs, 3);
    assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
}

/* ---- order and dependencies within batches ---- */

/* Two jobs of 20 tasks queued behind a hold (one ring and past it): each
   job's tasks run in submission order, the first job's before the
   second's. */
static void tasks_of_two_jobs_queued_in_one_ring_keep_their_order(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    const struct plan a = { .job = 1, .n = 20 }, b = { .job = 2, .n = 20 };

    worker_job *jobs[3] = { hold_sub0(w, 9) };
    jobs[1] = submit(w, &a);
    jobs[2] = submit(w, &b);
    open_hold();
    for (int i = 0; i < 3; i++)
        assert_int_equal(worker_wait(jobs[i], rt_bound_s(5.0)), 0);
    assert_int_equal(atomic_load(&shared[LOG_N]), 41);
    assert_int_equal(log_at(0), logged(9, 0));
    for (unsigned i = 0; i < 20; i++) {
        assert_int_equal(log_at(1 + i), logged(1, i));
        assert_int_equal(log_at(21 + i), logged(2, i));
    }
    end_case(t, jobs, 3);
}

/* In one ring: job 1's task 1 fails; its later tasks there (each after
   the one before it) are skipped, not run, and fail; job 2's tasks,
   behind them in the same ring, run. */
static void a_failed_task_skips_its_dependents_in_the_ring_only(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    static const struct spec fail_second[] = { { 0, RECORD, 0, -1 },
                                               { 0, FAIL, 0, -1 } };
    const struct plan a = { .job = 1,
                            .n = 4,
                            .spec = fail_second,
                            .n_spec = 2 },
                      b = { .job = 2, .n = 2 };

    worker_job *jobs[3] = { hold_sub0(w, 9) };
    jobs[1] = submit(w, &a);
    jobs[2] = submit(w, &b);
    open_hold();
    assert_int_equal(worker_wait(jobs[1], rt_bound_s(5.0)), -EIO);
    assert_contains(worker_job_error(jobs[1]), "sub_worker: step 1.1 failed");
    assert_int_equal(worker_wait(jobs[2], rt_bound_s(5.0)), 0);
    assert_int_equal(worker_wait(jobs[0], rt_bound_s(5.0)), 0);
    assert_int_equal(worker_job_result(jobs[1], 0, NULL), 0);
    for (int i = 1; i < 4; i++)
        assert_int_equal(worker_job_result(jobs[1], i, NULL), -EIO);
    assert_true(ran(1, 0) && ran(1, 1));
    assert_false(ran(1, 2) || ran(1, 3));
    assert_true(ran(2, 0) && ran(2, 1));
    end_case(t, jobs, 3);
}

/* Blobs of every size up to the largest, 40 of them queued behind a hold:
   the blob area holds only a few at a time, so tasks wait for room (as
   for a free slot), blobs start over at the area's beginning when they
   would cross its end, and each arrives whole, in order. */
static size_t pad_of(unsigned i)
{
    return i % 4 == 0
               ? WORKER_TASK_ARGS_MAX - sizeof(struct step)
               : (i * 997u) % (WORKER_TASK_ARGS_MAX - sizeof(struct step));
}

static void blobs_wait_for_room_and_arrive_whole_in_order(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    const struct plan p = { .job = 1, .n = 40, .pad = pad_of };

    worker_job *jobs[2] = { hold_sub0(w, 9) };
    jobs[1] = submit(w, &p);
    open_hold();
    assert_int_equal(worker_wait(jobs[1], rt_bound_s(5.0)), 0);
    assert_int_equal(worker_wait(jobs[0], rt_bound_s(5.0)), 0);
    assert_int_equal(atomic_load(&shared[LOG_N]), 41);
    for (unsigned i = 0; i < 40; i++)
        assert_int_equal(log_at(1 + i), logged(1, i));
    end_case(t, jobs, 2);
}

/* ---- completions waited for in the middle of a batch ---- */

/* Sub 0's ring: task 0 held, then task 1 held longer. Task 2, on sub 1,
   depends on task 0: once task 0 is let go, task 2 runs while task 1
   still keeps sub 0's batch open (seen in the log: waiting for the task
   would kick the scheduler and hide the case). */
static void a_task_on_another_target_starts_mid_batch(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub*2}", &o, &t);
    static const struct spec tasks[] = { { 0, HOLD, 1, -1 },
                                         { 0, HOLD, 2, -1 },
                                         { 1, RECORD, 0, 0 } };
    const struct plan p = { .job = 1, .n = 3, .spec = tasks, .n_spec = 3 };

    worker_job *job = submit(w, &p);
    await_holds(1);
    open_hold();
    assert_int_equal(word_await(&shared[LOG_N], 2, rt_bound_s(2.0)), 0);
    assert_true(ran(1, 0) && ran(1, 2));
    assert_false(ran(1, 1));
    open_hold();
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), 0);
    end_case(t, &job, 1);
}

/* Sub 0's ring: task 0, then task 1 held. A caller that starts waiting
   for task 0 only now hears of it without the end of the batch. */
static void a_task_waiter_hears_of_its_task_mid_batch(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    static const struct spec tasks[] = { { 0, RECORD, 0, -1 },
                                         { 0, HOLD, 1, -1 } };
    const struct plan p = { .job = 1, .n = 2, .spec = tasks, .n_spec = 2 };

    worker_job *job = submit(w, &p);
    await_holds(1);
    assert_int_equal(worker_task_wait(job, 0, rt_bound_s(2.0)), 0);
    assert_int_equal(worker_job_result(job, 1, NULL), -EINPROGRESS);
    open_hold();
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), 0);
    end_case(t, &job, 1);
}

/* Sub 0 holds task 0; task 1, on sub 1, depends on it. A caller that
   gives up waiting for the run (it took the parked scheduler's pass and
   had sub 0 wake it, not the scheduler) leaves the completion to the
   scheduler: when the hold opens, task 1 starts with no caller waiting. */
static void a_waiter_that_gives_up_leaves_the_scheduler_listening(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub*2}", &o, &t);
    static const struct spec tasks[] = { { 0, HOLD, 1, -1 },
                                         { 1, RECORD, 0, 0 } };
    const struct plan p = { .job = 1, .n = 2, .spec = tasks, .n_spec = 2 };

    worker_job *job = submit(w, &p);
    await_holds(1);
    assert_int_equal(worker_wait(job, 0.01), -ETIMEDOUT);
    open_hold();
    assert_int_equal(word_await(&shared[LOG_N], 2, rt_bound_s(2.0)), 0);
    assert_true(ran(1, 0) && ran(1, 1));
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), 0);
    end_case(t, &job, 1);
}

/* Sub 0's ring: a hold (job 9), job 1's task, job 2's task held. Job 1
   ends while job 2 keeps the batch open, and its waiter hears of it. */
static void a_job_ending_mid_batch_wakes_its_waiter(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    static const struct spec held[] = { { 0, HOLD, 2, -1 } };
    const struct plan a = { .job = 1, .n = 1 },
                      b = { .job = 2, .n = 1, .spec = held, .n_spec = 1 };

    worker_job *jobs[3] = { hold_sub0(w, 9) };
    jobs[1] = submit(w, &a);
    jobs[2] = submit(w, &b);
    open_hold(); /* level 1: the first hold goes, job 2's stays */
    await_holds(2);
    assert_int_equal(worker_wait(jobs[1], rt_bound_s(2.0)), 0);
    assert_int_equal(worker_job_result(jobs[2], 0, NULL), -EINPROGRESS);
    open_hold();
    assert_int_equal(worker_wait(jobs[2], rt_bound_s(5.0)), 0);
    assert_int_equal(worker_wait(jobs[0], rt_bound_s(5.0)), 0);
    end_case(t, jobs, 3);
}

/* ---- a batch cut short ---- */

/* Sub 0's ring: job 1's task 0, its task 1 held, then job 2's two tasks.
   SIGKILLed inside task 1, the sub's completed task keeps its result, the
   running one fails "died during a task", job 2's "died before the task
   ran", both naming the child and its signal. */
static void a_child_killed_mid_batch_fails_the_rest_naming_it(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    static const struct spec tasks[] = { { 0, RECORD, 0, -1 },
                                         { 0, HOLD, 1, -1 } };
    const struct plan a = { .job = 1, .n = 2, .spec = tasks, .n_spec = 2 },
                      b = { .job = 2, .n = 2 };
    pid_t pid = rt_child_pid(w, WORKER_CHILD_SUB, 0);
    char want[128];

    worker_job *jobs[2] = { submit(w, &a), submit(w, &b) };
    await_holds(1);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(worker_wait(jobs[0], rt_bound_s(2.0)), -EIO);
    snprintf(want, sizeof(want),
             "sub_worker: child process pid %d died during a task "
             "(killed by signal 9 (KILL))",
             (int)pid);
    assert_contains(worker_job_error(jobs[0]), want);
    assert_int_equal(worker_job_result(jobs[0], 0, NULL), 0);
    assert_int_equal(worker_wait(jobs[1], rt_bound_s(2.0)), -EIO);
    snprintf(want, sizeof(want),
             "sub_worker: child process pid %d died before the task ran "
             "(killed by signal 9 (KILL))",
             (int)pid);
    assert_contains(worker_job_error(jobs[1]), want);
    assert_false(ran(2, 0) || ran(2, 1));
    end_case(t, jobs, 2);
}

/* A full ring and more queued behind a held task when a control command
   times out: the endpoint is poisoned and the child told to shut down.
   Let go, the held task completes; the child runs none of the others and
   leaves; they all fail with the poison's reason, as the queued ones did
   with a single task frame. */
static void shutdown_with_a_full_ring_fails_the_queued_tasks(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = sub_tree("L3{sub}", &o, &t);
    static const struct spec held[] = { { 0, HOLD, 1, -1 } };
    const struct plan p = {
        .job = 1, .n = RING + 4, .spec = held, .n_spec = 1
    };

    worker_job *job = submit(w, &p);
    await_holds(1);
    assert_int_equal(worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING,
                                    0, 0.1, NULL),
                     -ETIMEDOUT);
    open_hold();
    assert_int_equal(worker_wait(job, rt_bound_s(2.0)), -EIO);
    assert_contains(worker_job_error(job), "control ping timed out");
    assert_int_equal(worker_job_result(job, 0, NULL), 0);
    for (int i = 1; i < (int)RING + 4; i++)
        assert_int_equal(worker_job_result(job, i, NULL), -EIO);
    assert_int_equal(atomic_load(&shared[LOG_N]), 1);
    end_case(t, &job, 1);
}

/* worker_free() of a tree whose run does not drain: a full ring and more
   behind a task held at its start abandon; the SHUTDOWN of the teardown
   lets the held task go (a gate opened at close_after_broadcast), and the
   child runs none of the others before it leaves. */
static void freeing_a_tree_with_a_full_ring_runs_none_of_its_queue(void **state)
{
    worker_options o = WORKER_OPTIONS_INIT;
    worker_gates *g;
    worker *w = NULL;
    worker_job *job;
    const struct plan p = { .job = 1, .n = RING + 4 };

    shared_new();
    assert_int_equal(worker_gates_new(&g), 0);
    o.level = 3;
    o.num_subs = 1;
    o.startup_timeout_s = 5;
    o.close_timeout_s = 2;
    o.drain_timeout_s = 0.1;
    o.gates = g;
    o.faults = "sub.0:task_begin=gate_wait(0); "
               "root:close_after_broadcast=gate_open(0)";
    assert_int_equal(worker_new(&w, &o), 0);
    assert_int_equal(worker_register_sub(w, "step", step, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_submit(w, plan_orch, (void *)&p, &job), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    double t0 = rt_now_s();
    worker_free(w);
    double dt = rt_now_s() - t0;
    print_message("free with a full ring: %.0f ms\n", dt * 1e3);
    assert_true(dt < rt_bound_s(1.5));
    assert_int_equal(atomic_load(&shared[LOG_N]), 1);
    assert_int_equal(log_at(0), logged(1, 0));
    worker_gates_free(g);
    shared_free();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(queued_tasks_are_served_in_one_wake_up, 5000),
        mpfw_unit_test(a_long_queue_costs_a_wake_up_per_ring_not_per_task,
                       5000),
        mpfw_unit_test(tasks_of_two_jobs_queued_in_one_ring_keep_their_order,
                       5000),
        mpfw_unit_test(a_failed_task_skips_its_dependents_in_the_ring_only,
                       5000),
        mpfw_unit_test(blobs_wait_for_room_and_arrive_whole_in_order, 5000),
        mpfw_unit_test(a_task_on_another_target_starts_mid_batch, 5000),
        mpfw_unit_test(a_task_waiter_hears_of_its_task_mid_batch, 5000),
        mpfw_unit_test(a_job_ending_mid_batch_wakes_its_waiter, 5000),
        mpfw_unit_test(a_waiter_that_gives_up_leaves_the_scheduler_listening,
                       5000),
        mpfw_unit_test(a_child_killed_mid_batch_fails_the_rest_naming_it, 5000),
        mpfw_unit_test(shutdown_with_a_full_ring_fails_the_queued_tasks, 5000),
        mpfw_unit_test(freeing_a_tree_with_a_full_ring_runs_none_of_its_queue,
                       5000),
        mpfw_unit_test(on_one_cpu_batches_run_whole_and_in_order, 10000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
