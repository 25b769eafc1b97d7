/* SPDX-License-Identifier: MIT */
/*
 * test_dispatch.c — running work on a tree (runtime part 2, issue 4):
 * vector add over simulated chips and their device memory, ordering and
 * dependencies, a child dying mid-task (seen through its pidfd, not a
 * liveness period) or before the first run, close() draining runs, and an
 * idle tree that parks.
 * Every case under the fixture's guard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "rt_helpers.h"

/* ---- helpers ---- */

/* A tree from spec, built NEW so callables can be registered first. */
static worker *new_tree(const char *spec, const mpfw_options *o, mpfw_tree **t)
{
    assert_int_equal(mpfw_tree_new(t, spec, o), 0);
    return mpfw_tree_root(*t);
}

static worker *up_tree(const char *spec, const mpfw_options *o, mpfw_tree **t)
{
    worker *w = new_tree(spec, o, t);
    int rc = worker_init(w);
    if (rc)
        fail_msg("init of %s: %d %s", spec, rc, worker_last_error(w));
    return w;
}

/* ---- vector add on N chips ---- */

struct vadd {
    unsigned chips;
    size_t per_chip; /* elements per chip */
    worker_devptr a[16], b[16], c[16];
};

static int vadd_orch(worker_job *job, void *arg)
{
    struct vadd *v = arg;

    for (unsigned i = 0; i < v->chips; i++) {
        uint64_t add[4] = { v->a[i], v->b[i], v->c[i], v->per_chip };
        uint64_t sum[2] = { v->c[i], v->per_chip };
        int t = worker_submit_chip(job, i, WORKER_KERNEL_VECTOR_ADD, add, 4);
        if (t < 0)
            return t;
        /* In order on the chip: the checksum runs after the add. */
        if ((t = worker_submit_chip(job, i, WORKER_KERNEL_CHECKSUM, sum, 2)) <
            0)
            return t;
    }
    return 0;
}

static void vector_add_on(unsigned chips)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    char spec[32];
    const size_t n = 4096;
    struct vadd v = { .chips = chips, .per_chip = n / chips };
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
    worker_job *job;
    worker *w;

    snprintf(spec, sizeof(spec), "L3{chip*%u}", chips);
    w = up_tree(spec, &o, &t);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)(i * 7 + 1);
        b[i] = (uint32_t)(1000000 - i * 3);
        c[i] = 0xdeadbeef;
    }
    for (unsigned i = 0; i < chips; i++) {
        size_t bytes = v.per_chip * 4;
        assert_int_equal(worker_device_alloc(w, i, bytes, &v.a[i]), 0);
        assert_int_equal(worker_device_alloc(w, i, bytes, &v.b[i]), 0);
        assert_int_equal(worker_device_alloc(w, i, bytes, &v.c[i]), 0);
        assert_int_equal(worker_device_copy_to(w, i, v.a[i], a + i * v.per_chip,
                                               bytes),
                         0);
        assert_int_equal(worker_device_copy_to(w, i, v.b[i], b + i * v.per_chip,
                                               bytes),
                         0);
    }
    assert_int_equal(worker_device_allocations(w), 3 * chips);
    assert_int_equal(worker_submit(w, vadd_orch, &v, &job), 0);
    if (worker_wait(job, WORKER_WAIT_FOREVER))
        fail_msg("vector add: %s", worker_job_error(job));
    for (unsigned i = 0; i < chips; i++) {
        uint64_t sum = 0, want = 0;
        assert_int_equal(worker_device_copy_from(w, i, c + i * v.per_chip,
                                                 v.c[i], v.per_chip * 4),
                         0);
        assert_int_equal(worker_job_result(job, (int)(2 * i + 1), &sum), 0);
        for (size_t k = 0; k < v.per_chip; k++)
            want += (uint32_t)(a[i * v.per_chip + k] + b[i * v.per_chip + k]);
        assert_true(sum == want);
    }
    worker_job_free(job);
    for (size_t i = 0; i < n; i++)
        if (c[i] != a[i] + b[i])
            fail_msg("c[%zu] = %u, want %u", i, c[i], a[i] + b[i]);
    for (unsigned i = 0; i < chips; i++) {
        assert_int_equal(worker_device_free(w, i, v.a[i]), 0);
        assert_int_equal(worker_device_free(w, i, v.b[i]), 0);
        assert_int_equal(worker_device_free(w, i, v.c[i]), 0);
    }
    assert_int_equal(worker_device_allocations(w), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_string_equal(worker_last_error(w), "");
    free(a);
    free(b);
    free(c);
}

static void vector_add_on_1_chip(void **state)
{
    vector_add_on(1);
}

static void vector_add_on_4_chips(void **state)
{
    vector_add_on(4);
}

static void vector_add_on_16_chips(void **state)
{
    vector_add_on(16);
}

/* ---- ordering ---- */

#define NOOP_TASKS 10000

struct order {
    _Atomic unsigned *next; /* shared: the index the sub expects next */
};

/* Runs in the sub: tasks must arrive in submission order. */
static int in_order(void *arg, const void *args, size_t len, char *msg,
                    size_t size)
{
    struct order *o = arg;
    uint32_t idx;

    if (len != sizeof(idx)) {
        snprintf(msg, size, "bad blob of %zu bytes", len);
        return -1;
    }
    memcpy(&idx, args, sizeof(idx));
    if (idx != atomic_load(o->next)) {
        snprintf(msg, size, "task %u ran when %u was due", idx,
                 atomic_load(o->next));
        return -1;
    }
    atomic_fetch_add(o->next, 1);
    return 0;
}

static int many_orch(worker_job *job, void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < NOOP_TASKS; i++) {
        int t = worker_submit_sub(job, 0, 0, &i, sizeof(i));
        if (t < 0)
            return t;
        if ((uint32_t)t != i)
            return worker_job_fail(job, -EPROTO, "task id %d for task %u", t,
                                   i);
    }
    return 0;
}

static void ten_thousand_noop_tasks_complete_in_order(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct order ord = { rt_shared_counters(1) };
    worker *w = new_tree("L3{sub*2}", &o, &t);

    assert_int_equal(worker_register_sub(w, "in_order", in_order, &ord), 0);
    assert_int_equal(worker_init(w), 0);
    double t0 = rt_now_s();
    int rc = worker_run(w, many_orch, NULL);
    double dt = rt_now_s() - t0;
    if (rc)
        fail_msg("run: %d %s", rc, worker_last_error(w));
    assert_int_equal(atomic_load(ord.next), NOOP_TASKS);
    print_message("%d tasks in %.0f ms (%.1f us per task)\n", NOOP_TASKS,
                  dt * 1e3, dt * 1e6 / NOOP_TASKS);
    assert_int_equal(mpfw_tree_close(t), 0);
    rt_shared_free(ord.next, 1);
}

static int ten_chip_noops(worker_job *job, void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        int t = worker_submit_chip(job, (unsigned)(i % 4), WORKER_KERNEL_NOOP,
                                   NULL, 0);
        if (t < 0)
            return t;
    }
    return 0;
}

static void run_equals_submit_then_wait(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_job *job;
    worker *w = up_tree("L3{chip*4}", &o, &t);

    assert_int_equal(worker_run(w, ten_chip_noops, NULL), 0);
    assert_int_equal(worker_submit(w, ten_chip_noops, NULL, &job), 0);
    assert_int_equal(worker_wait(job, WORKER_WAIT_FOREVER), 0);
    /* Waiting twice is idempotent. */
    assert_int_equal(worker_wait(job, 0), 0);
    assert_int_equal(worker_job_result(job, 99, NULL), 0);
    assert_int_equal(worker_job_result(job, 100, NULL), -ENOENT);
    worker_job_free(job);
    assert_int_equal(mpfw_tree_close(t), 0);
}

static void wait_rejects_unrepresentable_timeout(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_job *job;
    worker *w = up_tree("L3{chip*4}", &o, &t);

    assert_int_equal(worker_wait(NULL, 1.0), -EINVAL);
    assert_int_equal(worker_submit(w, ten_chip_noops, NULL, &job), 0);
    assert_int_equal(worker_wait(job, NAN), -EINVAL);
    assert_int_equal(worker_wait(job, INFINITY), -EINVAL);
    assert_int_equal(worker_wait(job, -INFINITY), -EINVAL);
    assert_int_equal(worker_wait(job, -2.0), -EINVAL);
    assert_int_equal(worker_task_wait(job, 0, NAN), -EINVAL);
    assert_int_equal(worker_task_wait(job, 100, 1.0), -ENOENT);
    assert_int_equal(worker_task_wait(job, 99, WORKER_WAIT_FOREVER), 0);
    assert_int_equal(worker_wait(job, WORKER_WAIT_FOREVER), 0);
    worker_job_free(job);
    /* A chip index the worker does not have is rejected at submit. */
    mpfw_tree *t1;
    worker *w1 = up_tree("L3{chip}", &o, &t1);
    assert_int_equal(worker_run(w1, ten_chip_noops, NULL), -EINVAL);
    assert_contains(worker_last_error(w1), "no chip 1 (the worker has 1)");
}

static void run_on_a_worker_that_is_not_ready_is_rejected(void **state)
{
    mpfw_tree *t;
    worker *w = new_tree("L3{chip}", NULL, &t);

    assert_int_equal(worker_run(w, ten_chip_noops, NULL), -EPERM);
    assert_contains(worker_last_error(w), "not initialized");
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_run(w, ten_chip_noops, NULL), -ESHUTDOWN);
    assert_contains(worker_last_error(w), "closed");
}

/* Fill on chip 0, then a checksum of the same memory on chip 0 that names
   the fill as an explicit dependency, and one on chip 1 of other memory. */
struct deps {
    worker_devptr p;
};

static int deps_orch(worker_job *job, void *arg)
{
    struct deps *d = arg;
    uint64_t fill[3] = { d->p, 1000, 3 }, sum[2] = { d->p, 1000 };
    worker_task t = WORKER_TASK_INIT;
    int f, deps[1];

    if ((f = worker_submit_chip(job, 0, WORKER_KERNEL_FILL, fill, 3)) < 0)
        return f;
    deps[0] = f;
    t.kind = WORKER_CHILD_CHIP;
    t.target = 0;
    t.callable = WORKER_KERNEL_CHECKSUM;
    t.kargs = sum;
    t.nkargs = 2;
    t.deps = deps;
    t.ndeps = 1;
    return worker_submit_task(job, &t) < 0 ? -EIO : 0;
}

static void explicit_dependencies_order_tasks(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct deps d;
    worker_job *job;
    uint64_t sum = 0;
    worker *w = up_tree("L3{chip*2}", &o, &t);

    assert_int_equal(worker_device_alloc(w, 0, 4000, &d.p), 0);
    assert_int_equal(worker_submit(w, deps_orch, &d, &job), 0);
    assert_int_equal(worker_wait(job, 5.0), 0);
    assert_int_equal(worker_job_result(job, 1, &sum), 0);
    assert_int_equal(sum, 3000);
    worker_job_free(job);
    assert_int_equal(worker_device_free(w, 0, d.p), 0);
}

/* WORKER_ANY tasks go to whichever sub is idle: with every sub held in its
   first task by a gate, each of the three got one. */
static int record_pid(void *arg, const void *args, size_t len, char *msg,
                      size_t size)
{
    _Atomic unsigned *seen = arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)size;
    atomic_fetch_add(&seen[0], 1);
    for (unsigned i = 1; i < 5; i++) {
        unsigned expected = 0;
        if (atomic_load(&seen[i]) == (unsigned)getpid())
            break;
        if (atomic_compare_exchange_strong(&seen[i], &expected,
                                           (unsigned)getpid()))
            break;
    }
    return 0;
}

static int any_orch(worker_job *job, void *arg)
{
    (void)arg;
    for (int i = 0; i < 40; i++) {
        int t = worker_submit_sub(job, WORKER_ANY, 0, NULL, 0);
        if (t < 0)
            return t;
    }
    return 0;
}

static void any_sub_tasks_spread_over_idle_subs(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    worker_job *job;
    mpfw_options o = rt_fast_options();
    _Atomic unsigned *seen = rt_shared_counters(5);

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = "sub.*:task_begin=gate_wait(0)";
    worker *w = new_tree("L3{sub*3}", &o, &t);
    assert_int_equal(worker_register_sub(w, "record_pid", record_pid,
                                         (void *)seen),
                     0);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_submit(w, any_orch, NULL, &job), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 3, 2000), 0);
    worker_gate_open(g, 0);
    assert_int_equal(worker_wait(job, 5.0), 0);
    worker_job_free(job);
    assert_int_equal(atomic_load(&seen[0]), 40);
    unsigned distinct = 0;
    for (unsigned i = 1; i < 5; i++)
        distinct += atomic_load(&seen[i]) != 0;
    assert_int_equal(distinct, 3);
    assert_int_equal(mpfw_tree_close(t), 0);
    rt_shared_free(seen, 5);
    worker_gates_free(g);
}

struct one_kernel {
    unsigned chip;
    unsigned kernel;
    uint64_t arg;
};

static int one_kernel_orch(worker_job *job, void *arg)
{
    struct one_kernel *k = arg;
    int t = worker_submit_chip(job, k->chip, k->kernel, &k->arg, 1);
    return t < 0 ? t : 0;
}

/* The task_end fault point fails a task that ran, with the chip's prefix;
   a task failure does not poison the endpoint: the next kernel there runs
   (and fails again only because the fault is still armed). */
static void fault_at_task_end_fails_the_task_with_the_chip_prefix(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 1, WORKER_KERNEL_NOOP, 0 };

    o.faults = "chip.1:task_end=fail(device lost the result)";
    worker *w = up_tree("L3{chip*4}", &o, &t);
    assert_int_equal(worker_run(w, ten_chip_noops, NULL), -EIO);
    assert_string_equal(worker_last_error(w),
                        "chip dev=1: device lost the result");
    k.chip = 0;
    assert_int_equal(worker_run(w, one_kernel_orch, &k), 0);
    k.chip = 1;
    assert_int_equal(worker_run(w, one_kernel_orch, &k), -EIO);
    assert_string_equal(worker_last_error(w),
                        "chip dev=1: device lost the result");
    assert_int_equal(mpfw_tree_close(t), 0);
}

/* A next-level task carries an argument blob to the orchestration callable
   its child runs; the child's run fans it out to its own subs. */
struct fan {
    uint32_t tasks;
    uint32_t value;
};

static int add_value(void *arg, const void *args, size_t len, char *msg,
                     size_t size)
{
    uint32_t v;
    (void)size;
    if (len != sizeof(v)) {
        snprintf(msg, size, "blob of %zu bytes", len);
        return -1;
    }
    memcpy(&v, args, sizeof(v));
    atomic_fetch_add((_Atomic unsigned *)arg, v);
    return 0;
}

static int l3_fan_out(worker_job *job, void *arg)
{
    size_t len;
    const struct fan *f = worker_job_args(job, &len);
    (void)arg;
    if (!f || len != sizeof(*f))
        return worker_job_fail(job, -EINVAL, "fan: blob of %zu bytes", len);
    for (uint32_t i = 0; i < f->tasks; i++)
        if (worker_submit_sub(job, WORKER_ANY, 0, &f->value, sizeof(f->value)) <
            0)
            return -EIO;
    return 0;
}

static int l4_fan(worker_job *job, void *arg)
{
    const struct fan *f = arg;
    for (unsigned id = 0; id < 2; id++)
        if (worker_submit_next(job, id, 0, f, sizeof(*f)) < 0)
            return -EIO;
    return 0;
}

static void next_level_task_passes_its_argument_blob(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    _Atomic unsigned *sum = rt_shared_counters(1);
    struct fan f = { 25, 3 };

    worker *w = new_tree("L4{L3{sub*2}*2}", &o, &t);
    for (unsigned i = 0; i < 2; i++) {
        worker *l3 = worker_next_child(w, i);
        assert_int_equal(worker_register_sub(l3, "add", add_value, (void *)sum),
                         0);
        assert_int_equal(worker_register_orch(l3, "fan", l3_fan_out, NULL), 0);
    }
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_run(w, l4_fan, &f), 0);
    assert_int_equal(atomic_load(sum), 2 * 25 * 3);
    /* An unknown orchestration id on the child is rejected at submit. */
    assert_int_equal(mpfw_tree_close(t), 0);
    rt_shared_free(sum, 1);
}

static int l4_bad_id(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_next(job, 0, 7, NULL, 0);
    return t < 0 ? t : 0;
}

static void
next_level_task_with_unknown_callable_is_rejected_at_submit(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    worker *w = up_tree("L4{L3{sub}}", &o, &t);
    assert_int_equal(worker_run(w, l4_bad_id, NULL), -EINVAL);
    assert_contains(worker_last_error(w),
                    "no orchestration callable with id 7 on "
                    "next-level worker 0");
}

/* ---- a child dying mid-task ---- */

static void assert_close_reports_exited(worker *w, worker_child_kind kind,
                                        unsigned index, int sig)
{
    worker_rollback_report r;

    assert_int_equal(worker_last_close(w, &r), 0);
    for (size_t i = 0; i < r.n; i++)
        if (r.entries[i].kind == kind && r.entries[i].index == index) {
            assert_int_equal(r.entries[i].disposition, WORKER_DISP_EXITED);
            assert_true(WIFSIGNALED(r.entries[i].wait_status));
            assert_int_equal(WTERMSIG(r.entries[i].wait_status), sig);
            assert_reaped(r.entries[i].pid);
            return;
        }
    fail_msg("no close report entry for %s %u", worker_child_kind_name(kind),
             index);
}

/* The chip kills itself inside the kernel: the run fails, naming the
   signal, within 100 ms of its start (dispatch + death + detection). */
static void chip_crashing_mid_task(int sig, const char *name)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 1, WORKER_KERNEL_CRASH, (uint64_t)sig };
    worker *w = up_tree("L3{sub,chip*2}", &o, &t);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_CHIP, 1);
    char want[96];

    double t0 = rt_now_s();
    int rc = worker_run(w, one_kernel_orch, &k);
    double dt = rt_now_s() - t0;
    assert_int_equal(rc, -EIO);
    snprintf(want, sizeof(want),
             "chip dev=1: child process pid %d died during a task", (int)pid);
    assert_contains(worker_last_error(w), want);
    assert_contains(worker_last_error(w), name);
    print_message("chip crash (%s): run failed %.2f ms after it started\n",
                  name, dt * 1e3);
    if (dt >= rt_bound_s(0.1))
        fail_msg("run took %.1f ms to report the crash", dt * 1e3);
    /* The other chip still works; the dead one fails fast. */
    k.chip = 0;
    k.kernel = WORKER_KERNEL_NOOP;
    assert_int_equal(worker_run(w, one_kernel_orch, &k), 0);
    k.chip = 1;
    assert_int_equal(worker_run(w, one_kernel_orch, &k), -EIO);
    assert_contains(worker_last_error(w), "is gone");
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_close_reports_exited(w, WORKER_CHILD_CHIP, 1, sig);
    assert_contains(worker_last_error(w), "chip 1 (pid");
}

static void chip_sigkill_mid_task_fails_the_run_within_100ms(void **state)
{
    chip_crashing_mid_task(SIGKILL, "killed by signal 9 (KILL)");
}

static void chip_sigsegv_mid_task_fails_the_run_within_100ms(void **state)
{
    chip_crashing_mid_task(SIGSEGV, "killed by signal 11 (SEGV)");
}

/* ---- a tree that has not run yet ---- */

/* Threads of this process: the entries of /proc/self/task. */
static unsigned threads_of_self(void)
{
    DIR *d = opendir("/proc/self/task");
    unsigned n = 0;

    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Chip `index` of w killed from outside, and dead (not reaped: the
   worker's exit descriptor sees it) when this returns. */
static pid_t kill_chip_and_wait_for_its_death(worker *w, unsigned index)
{
    pid_t pid = rt_child_pid(w, WORKER_CHILD_CHIP, index);

    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(rt_await_exit(pid, (int)(rt_bound_s(2.0) * 1000)), 0);
    return pid;
}

/* The scheduler thread comes with the first run: a tree that is started
   and closed runs none, and the one a run started ends with the close. */
static void a_tree_runs_its_scheduler_thread_from_its_first_run(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 0, WORKER_KERNEL_NOOP, 0 };
    unsigned before = threads_of_self();
    worker *w = up_tree("L3{chip*2}", &o, &t);

    assert_int_equal(threads_of_self(), before);
    assert_int_equal(worker_run(w, one_kernel_orch, &k), 0);
    assert_int_equal(threads_of_self(), before + 1);
    assert_int_equal(worker_run(w, one_kernel_orch, &k), 0);
    assert_int_equal(threads_of_self(), before + 1);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(threads_of_self(), before);

    (void)up_tree("L3{chip*2}", &o, &t);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(threads_of_self(), before);
}

/* A chip that died while the tree was idle, before any run: the first
   run that names it fails at once as one naming a chip known dead does
   (the scheduler that starts with that run looks for exits first); the
   other chip serves; the close reports the chip as exited, by SIGKILL. */
static void a_chip_dead_before_the_first_run_fails_it_as_gone(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 1, WORKER_KERNEL_NOOP, 0 };
    char want[96];
    worker *w = up_tree("L3{chip*2}", &o, &t);
    pid_t pid = kill_chip_and_wait_for_its_death(w, 1);

    assert_int_equal(worker_run(w, one_kernel_orch, &k), -EIO);
    snprintf(want, sizeof(want), "chip dev=1: child process pid %d is gone",
             (int)pid);
    assert_contains(worker_last_error(w), want);
    assert_contains(worker_last_error(w), "killed by signal 9 (KILL)");
    k.chip = 0;
    assert_int_equal(worker_run(w, one_kernel_orch, &k), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_close_reports_exited(w, WORKER_CHILD_CHIP, 1, SIGKILL);
}

/* A tree never run has no scheduler thread to see a chip die: its close
   still reports the chip as exited by SIGKILL, not as one that left
   after SHUTDOWN. */
static void
a_chip_dead_in_a_tree_never_run_is_reported_exited_by_close(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = up_tree("L3{chip*2}", &o, &t);

    kill_chip_and_wait_for_its_death(w, 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_close_reports_exited(w, WORKER_CHILD_CHIP, 0, SIGKILL);
    assert_contains(worker_last_error(w), "chip 0 (pid");
}

/* Killed from outside while held inside its task: from the kill to the
   failed wait within 100 ms. */
static void
chip_killed_from_outside_mid_task_fails_the_run_within_100ms(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 0, WORKER_KERNEL_NOOP, 0 };
    worker_job *job;

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.faults = "chip.0:task_begin=gate_wait(0)";
    worker *w = up_tree("L3{chip*2}", &o, &t);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_CHIP, 0);
    assert_int_equal(worker_submit(w, one_kernel_orch, &k, &job), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    double t0 = rt_now_s();
    assert_int_equal(kill(pid, SIGKILL), 0);
    int rc = worker_wait(job, 2.0);
    double dt = rt_now_s() - t0;
    assert_int_equal(rc, -EIO);
    assert_contains(worker_job_error(job), "chip dev=0: child process pid");
    assert_contains(worker_job_error(job), "killed by signal 9 (KILL)");
    print_message("chip SIGKILLed mid-task: wait returned %.2f ms after the "
                  "kill\n",
                  dt * 1e3);
    if (dt >= rt_bound_s(0.1))
        fail_msg("wait returned %.1f ms after the kill", dt * 1e3);
    worker_job_free(job);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_close_reports_exited(w, WORKER_CHILD_CHIP, 0, SIGKILL);
    worker_gates_free(g);
}

/* A next-level child runs its inner run; it is killed mid-task. */
static int l3_sleep_orch(worker_job *job, void *arg)
{
    uint64_t ms = 2000;
    (void)arg;
    int t = worker_submit_chip(job, 0, WORKER_KERNEL_SLEEP, &ms, 1);
    return t < 0 ? t : 0;
}

static int l4_orch(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_next(job, 0, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static void
next_level_child_dying_mid_run_fails_the_run_within_100ms(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = rt_fast_options();
    worker_job *job;
    char want[96];

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    /* Counts the grandchild's task start without holding it. */
    worker_gate_open(g, 0);
    o.faults = "next.0/chip.0:task_begin=gate_wait(0)";
    worker *w = new_tree("L4{L3{chip*2,sub}}", &o, &t);
    assert_int_equal(worker_register_orch(mpfw_tree_find(t, "next.0"), "sleep",
                                          l3_sleep_orch, NULL),
                     0);
    assert_int_equal(worker_init(w), 0);
    pid_t pid = rt_child_pid(w, WORKER_CHILD_NEXT, 0);
    assert_int_equal(worker_submit(w, l4_orch, NULL, &job), 0);
    /* The L3 child is inside its task (its chip started the sleep). */
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    double t0 = rt_now_s();
    assert_int_equal(kill(pid, SIGKILL), 0);
    int rc = worker_wait(job, 2.0);
    double dt = rt_now_s() - t0;
    assert_int_equal(rc, -EIO);
    snprintf(want, sizeof(want),
             "child_worker level=3: child process pid %d died "
             "during a task",
             (int)pid);
    assert_contains(worker_job_error(job), want);
    assert_contains(worker_job_error(job), "killed by signal 9 (KILL)");
    print_message("next-level child SIGKILLed mid-run: wait returned %.2f ms "
                  "after "
                  "the kill\n",
                  dt * 1e3);
    if (dt >= rt_bound_s(0.1))
        fail_msg("wait returned %.1f ms after the kill", dt * 1e3);
    worker_job_free(job);
    /* Its own children (our grandchildren) and their shm go too: the
       fixture checks processes and /dev/shm after this. */
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_close_reports_exited(w, WORKER_CHILD_NEXT, 0, SIGKILL);
    worker_gates_free(g);
}

/* A sub callable that crashes (no core dump: core_pattern may write one). */
static int abort_sub(void *arg, const void *args, size_t len, char *msg,
                     size_t size)
{
    struct rlimit rl = { 0, 0 };
    (void)arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)size;
    setrlimit(RLIMIT_CORE, &rl);
    prctl(PR_SET_DUMPABLE, 0);
    raise(SIGABRT);
    return 0;
}

static int one_sub_orch(worker_job *job, void *arg)
{
    (void)arg;
    int t = worker_submit_sub(job, 0, 0, NULL, 0);
    return t < 0 ? t : 0;
}

static void
sub_dying_in_its_callable_fails_the_run_with_its_status(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = new_tree("L3{sub}", &o, &t);

    assert_int_equal(worker_register_sub(w, "abort", abort_sub, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    double t0 = rt_now_s();
    assert_int_equal(worker_run(w, one_sub_orch, NULL), -EIO);
    assert_true(rt_now_s() - t0 < rt_bound_s(0.5));
    assert_contains(worker_last_error(w), "sub_worker: child process pid");
    assert_contains(worker_last_error(w), "killed by signal 6 (ABRT)");
    assert_int_equal(mpfw_tree_close(t), 0);
}

/* ---- close() and runs in flight ---- */

struct sleeper {
    worker *w;
    unsigned ms;
    int rc;
    double t_done;
};

static int sleep_orch(worker_job *job, void *arg)
{
    struct sleeper *s = arg;
    uint64_t ms = s->ms;
    int t = worker_submit_chip(job, 0, WORKER_KERNEL_SLEEP, &ms, 1);
    return t < 0 ? t : 0;
}

static void *run_in_thread(void *arg)
{
    struct sleeper *s = arg;
    s->rc = worker_run(s->w, sleep_orch, s);
    s->t_done = rt_now_s();
    return NULL;
}

static void close_drains_in_flight_run(void **state)
{
    mpfw_tree *t;
    worker_gates *g;
    mpfw_options o = rt_fast_options();
    pthread_t th;

    assert_int_equal(worker_gates_new(&g), 0);
    worker_gate_open(g, 0); /* counts the task start, never holds it */
    o.gates = g;
    o.faults = "chip.0:task_begin=gate_wait(0)";
    worker *w = up_tree("L3{chip}", &o, &t);
    struct sleeper s = { w, 300, -1, 0 };
    double t0 = rt_now_s();
    assert_int_equal(pthread_create(&th, NULL, run_in_thread, &s), 0);
    assert_int_equal(worker_gate_await_arrivals(g, 0, 1, 2000), 0);
    int rc = mpfw_tree_close(t);
    double dt = rt_now_s() - t0;
    pthread_join(th, NULL);
    assert_int_equal(rc, 0);
    /* The task completed (a teardown under it would have failed the run),
       and close waited for its 300 ms before tearing down. */
    assert_int_equal(s.rc, 0);
    assert_true(dt >= 0.3);
    assert_int_equal(worker_get_state(w), WORKER_CLOSED);
    worker_gates_free(g);
}

static void close_timeout_defers_teardown_and_retry_completes(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_job *job;
    worker_gates *g;
    pid_t pid;

    assert_int_equal(worker_gates_new(&g), 0);
    o.gates = g;
    o.drain_timeout_s = 0.2;
    /* The task ends when the test opens gate 1 (not after a sleep that a
       slow machine or valgrind outlasts): in flight as long as needed. */
    o.faults = "chip.0:task_end=gate_wait(1)";
    worker *w = up_tree("L3{chip,sub}", &o, &t);
    struct sleeper s = { w, 0, -1, 0 };
    pid = rt_child_pid(w, WORKER_CHILD_CHIP, 0);
    assert_int_equal(worker_submit(w, sleep_orch, &s, &job), 0);
    double t0 = rt_now_s();
    assert_int_equal(worker_close(w), -ETIMEDOUT);
    double dt = rt_now_s() - t0;
    assert_true(dt >= 0.2 && dt < 0.2 + rt_bound_s(0.3));
    assert_contains(worker_last_error(w), "1 run(s) still in flight");
    assert_contains(worker_last_error(w), "teardown deferred");
    assert_int_equal(worker_get_state(w), WORKER_CLOSED);
    /* Nothing was torn down: the chip is alive and a new run is refused. */
    assert_alive(pid);
    assert_int_equal(worker_run(w, sleep_orch, &s), -ESHUTDOWN);
    /* A retry while the task still runs times out again, without teardown. */
    assert_int_equal(worker_close(w), -ETIMEDOUT);
    assert_alive(pid);
    /* Once the run is done, the next close converges. */
    assert_int_equal(worker_gate_open(g, 1), 0);
    assert_int_equal(worker_wait(job, rt_bound_s(2.0)), 0);
    worker_job_free(job);
    assert_int_equal(worker_close(w), 0);
    assert_reaped(pid);
    worker_gates_free(g);
}

static void unwaited_job_is_drained_by_close(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_job *job;
    worker *w = up_tree("L3{chip}", &o, &t);
    struct sleeper s = { w, 100, -1, 0 };

    assert_int_equal(worker_submit(w, sleep_orch, &s, &job), 0);
    worker_job_free(job); /* detached: nobody waits */
    double t0 = rt_now_s();
    assert_int_equal(worker_close(w), 0);
    assert_true(rt_now_s() - t0 >= 0.09);
}

static int close_inside_orch(worker_job *job, void *arg)
{
    worker *w = worker_job_worker(job);
    (void)arg;
    return worker_close(w) == -EDEADLK ? 0 : -EPROTO;
}

static void reentrant_close_from_a_run_is_rejected(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker *w = up_tree("L3{chip}", &o, &t);

    assert_int_equal(worker_run(w, close_inside_orch, NULL), 0);
    assert_contains(worker_last_error(w), "within a run");
    assert_int_equal(worker_get_state(w), WORKER_READY);
}

/* simpler #1003 class: a task that never finishes. The case's budget
   (1 s) fires, the fixture SIGKILLs the tree, the scheduler sees the
   chip die and fails the run, so the wait returns and the case unwinds
   through its own error path; the report shows the budget (expected) and
   nothing else. */
static void a_hung_task_is_ended_by_the_case_budget(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct one_kernel k = { 0, WORKER_KERNEL_SLEEP, 60000 };

    mpf_expect(MPF_BUDGET, "wk-chip-0");
    worker *w = up_tree("L3{chip}", &o, &t);
    assert_int_equal(worker_run(w, one_kernel_orch, &k), -EIO);
    assert_contains(worker_last_error(w), "killed by signal 9 (KILL)");
    assert_true(mpf_budget_expired());
}

/* ---- device memory ---- */

static void device_memory_round_trip_and_free(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p, q;
    uint32_t in[256], out[256];
    uint64_t regions = 99;
    worker *w = up_tree("L3{chip*2}", &o, &t);

    for (unsigned i = 0; i < 256; i++)
        in[i] = i * i;
    assert_int_equal(worker_device_alloc(w, 1, sizeof(in), &p), 0);
    assert_int_equal(worker_device_alloc(w, 1, 64, &q), 0);
    assert_int_equal(WORKER_DEVPTR_REGION(p) != WORKER_DEVPTR_REGION(q), 1);
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 1,
                                    WORKER_CONTROL_DEVICE_REGIONS, 0, 2.0,
                                    &regions),
                     0);
    assert_int_equal(regions, 2);
    assert_int_equal(worker_device_copy_to(w, 1, p, in, sizeof(in)), 0);
    assert_int_equal(worker_device_copy_from(w, 1, out, p, sizeof(out)), 0);
    assert_memory_equal(in, out, sizeof(in));
    /* Offsets inside a region, and range checks. */
    assert_int_equal(worker_device_copy_from(w, 1, out, p + 16, 16), 0);
    assert_memory_equal(out, in + 4, 16);
    assert_int_equal(worker_device_copy_to(w, 1, p + 1000, in, 100), -EINVAL);
    assert_int_equal(worker_device_copy_to(w, 0, p, in, 4), -EINVAL);
    assert_int_equal(worker_device_alloc(w, 2, 64, &q), -EINVAL);
    assert_int_equal(worker_device_alloc(w, 0, 0, &q), -EINVAL);
    assert_int_equal(worker_device_free(w, 1, p + 4), -EINVAL);
    assert_int_equal(worker_device_free(w, 1, p), 0);
    assert_int_equal(worker_device_free(w, 1, p), -EINVAL);
    assert_int_equal(worker_device_free(w, 1, q), 0);
    assert_int_equal(worker_control(w, WORKER_CHILD_CHIP, 1,
                                    WORKER_CONTROL_DEVICE_REGIONS, 0, 2.0,
                                    &regions),
                     0);
    assert_int_equal(regions, 0);
    /* Region 0: the chip's base memory, addressable directly. */
    assert_int_equal(worker_device_copy_to(w, 0, WORKER_DEVPTR(0, 64), in, 64),
                     0);
    assert_int_equal(worker_device_copy_from(w, 0, out, WORKER_DEVPTR(0, 64),
                                             64),
                     0);
    assert_memory_equal(in, out, 64);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_not_contains(worker_last_error(w), "not freed");
}

/* Entries of this tree's namespace (its shm prefix) that contain `needle`:
   never another test's, whatever runs beside this one. */
static unsigned shm_of(worker *w, const char *needle)
{
    const char *prefix = worker_shm_prefix(w) + 1;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    unsigned n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
            strstr(e->d_name, needle))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void device_memory_leak_is_named_and_reclaimed_by_close(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p;

    o.device_leaks = WORKER_DEVICE_LEAKS_RECLAIM;
    worker *w = up_tree("L3{chip}", &o, &t);
    assert_int_equal(worker_device_alloc(w, 0, 4096, &p), 0);
    assert_int_equal(shm_of(w, ".dev.1"), 1);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_contains(worker_last_error(w),
                    "device memory not freed by the caller: 1 "
                    "region(s), 4096 bytes (reclaimed)");
    assert_contains(worker_last_error(w), "chip-0.dev.1");
    assert_int_equal(shm_of(w, ""), 0);
    assert_int_equal(worker_device_allocations(w), 0);
}

/* Policy KEEP (the companion's default): the leak outlives close(), and the
   fixture reports it as this case's shm_leak naming the region (expected
   here, so the case passes only if the fixture sees it). */
static void device_memory_leak_is_visible_to_the_fixture_as_shm(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p, q;

    worker *w = up_tree("L3{chip}", &o, &t);
    assert_int_equal(worker_device_alloc(w, 0, 4096, &p), 0);
    assert_int_equal(worker_device_alloc(w, 0, 4096, &q), 0);
    assert_int_equal(worker_device_free(w, 0, q), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_contains(worker_last_error(w),
                    "1 region(s), 4096 bytes (left in /dev/shm)");
    assert_int_equal(shm_of(w, "chip-0.dev.1"), 1);
    assert_int_equal(shm_of(w, "chip-0.dev.2"), 0);
    mpf_expect(MPF_SHM_LEAK, "chip-0.dev.1");
}

/* A kept leak can still be released after close(). */
static void device_memory_freed_after_close_leaves_nothing(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p;

    worker *w = up_tree("L3{chip}", &o, &t);
    assert_int_equal(worker_device_alloc(w, 0, 100, &p), 0);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(shm_of(w, "chip-0.dev.1"), 1);
    assert_int_equal(worker_device_free(w, 0, p), 0);
    assert_int_equal(shm_of(w, "chip-0.dev.1"), 0);
    assert_int_equal(worker_device_allocations(w), 0);
}

/* ---- an idle tree parks ---- */

/* CPU time (ns) of a process, all its threads, from /proc schedstat. */
static uint64_t cpu_ns_of(pid_t pid)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    uint64_t total = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char p2[300], buf[128];
        unsigned long long run = 0;
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(p2, sizeof(p2), "/proc/%d/task/%s/schedstat", (int)pid,
                 e->d_name);
        if (!(f = fopen(p2, "r")))
            continue;
        if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%llu", &run) == 1)
            total += run;
        fclose(f);
    }
    closedir(d);
    return total;
}

static void
idle_ready_tree_of_l3_and_8_chips_uses_under_2_percent_of_a_core(void **state)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    pid_t pids[8];
    struct pollfd pfd[8];
    uint64_t before = 0, after = 0;
    worker *w = up_tree("L3{chip*8}", &o, &t);

    /* One run first, so the scheduler has been through a dispatch. */
    assert_int_equal(worker_run(w, ten_chip_noops, NULL), 0);
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_CHIP, pids, 8), 8);
    bool have_pidfds = true;
    for (int i = 0; i < 8; i++) {
        pfd[i].fd = pidfd_open(pids[i], 0);
        pfd[i].events = POLLIN;
        if (pfd[i].fd < 0 && errno == ENOSYS)
            have_pidfds = false; /* valgrind */
        else
            assert_true(pfd[i].fd >= 0);
    }
    before = cpu_ns_of(getpid());
    for (int i = 0; i < 8; i++)
        before += cpu_ns_of(pids[i]);
    double t0 = rt_now_s();
    /* The window: a 2 s blocking wait for any chip to exit (none should).
       Without pidfds, a 2 s measurement window, then the same question. */
    int n = 0;
    if (have_pidfds) {
        n = poll(pfd, 8, 2000);
    } else {
        struct timespec window = { 2, 0 };
        nanosleep(&window, NULL);
    }
    double dt = rt_now_s() - t0;
    after = cpu_ns_of(getpid());
    for (int i = 0; i < 8; i++)
        after += cpu_ns_of(pids[i]);
    for (int i = 0; i < 8; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
        else if (waitid(P_PID, (id_t)pids[i], &si,
                        WEXITED | WNOHANG | WNOWAIT) == 0 &&
                 si.si_pid == pids[i])
            n++; /* it exited */
    }
    assert_int_equal(n, 0);
    double share = (double)(after - before) / 1e9 / dt;
    print_message("idle L3 + 8 chips: %.3f%% of one core over %.2f s (%llu us "
                  "of CPU)\n",
                  share * 100, dt, (unsigned long long)(after - before) / 1000);
    if (share >= 0.02)
        fail_msg("idle tree used %.2f%% of a core", share * 100);
    assert_int_equal(mpfw_tree_close(t), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(vector_add_on_1_chip, 5000),
        mpfw_unit_test(vector_add_on_4_chips, 5000),
        mpfw_unit_test(vector_add_on_16_chips, 8000),
        mpfw_unit_test(ten_thousand_noop_tasks_complete_in_order, 20000),
        mpfw_unit_test(run_equals_submit_then_wait, 5000),
        mpfw_unit_test(wait_rejects_unrepresentable_timeout, 5000),
        mpfw_unit_test(run_on_a_worker_that_is_not_ready_is_rejected, 2000),
        mpfw_unit_test(explicit_dependencies_order_tasks, 5000),
        mpfw_unit_test(any_sub_tasks_spread_over_idle_subs, 5000),
        mpfw_unit_test(fault_at_task_end_fails_the_task_with_the_chip_prefix,
                       5000),
        mpfw_unit_test(next_level_task_passes_its_argument_blob, 5000),
        mpfw_unit_test(
            next_level_task_with_unknown_callable_is_rejected_at_submit, 5000),
        mpfw_unit_test(chip_sigkill_mid_task_fails_the_run_within_100ms, 5000),
        mpfw_unit_test(chip_sigsegv_mid_task_fails_the_run_within_100ms, 5000),
        mpfw_unit_test(
            chip_killed_from_outside_mid_task_fails_the_run_within_100ms, 5000),
        mpfw_unit_test(a_tree_runs_its_scheduler_thread_from_its_first_run,
                       5000),
        mpfw_unit_test(a_chip_dead_before_the_first_run_fails_it_as_gone, 5000),
        mpfw_unit_test(
            a_chip_dead_in_a_tree_never_run_is_reported_exited_by_close, 5000),
        mpfw_unit_test(
            next_level_child_dying_mid_run_fails_the_run_within_100ms, 5000),
        mpfw_unit_test(sub_dying_in_its_callable_fails_the_run_with_its_status,
                       5000),
        mpfw_unit_test(close_drains_in_flight_run, 5000),
        mpfw_unit_test(close_timeout_defers_teardown_and_retry_completes, 5000),
        mpfw_unit_test(unwaited_job_is_drained_by_close, 5000),
        mpfw_unit_test(reentrant_close_from_a_run_is_rejected, 5000),
        mpfw_unit_test(a_hung_task_is_ended_by_the_case_budget, 1000),
        mpfw_unit_test(device_memory_round_trip_and_free, 5000),
        mpfw_unit_test(device_memory_leak_is_named_and_reclaimed_by_close,
                       5000),
        mpfw_unit_test(device_memory_leak_is_visible_to_the_fixture_as_shm,
                       5000),
        mpfw_unit_test(device_memory_freed_after_close_leaves_nothing, 5000),
        mpfw_unit_test(
            idle_ready_tree_of_l3_and_8_chips_uses_under_2_percent_of_a_core,
            8000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
