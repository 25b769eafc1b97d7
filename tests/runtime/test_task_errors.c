/* SPDX-License-Identifier: MIT */
/*
 * test_task_errors.c — a task that fails in its child comes back as -EIO
 * with the child's own message behind its stable prefix: chip kernels
 * given too few arguments, memory outside what the chip has, an over-long
 * sleep; a sub callable that fails without a message. And the caller's
 * side of a run refuses what cannot be honoured: a submit after the
 * orchestration function returned, a dependency that is not an earlier
 * task, an orchestration function that fails without a message, a task
 * id the job does not have. Every case under the fixture's guard.
 */
#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>

#include "rt_helpers.h"
#include "rt_table.h"

/* ---- chip kernels ---- */

struct chip_task {
    unsigned chip, kernel, n;
    uint64_t kargs[WORKER_KERNEL_ARGS_MAX];
};

static int one_chip_task(worker_job *job, void *arg)
{
    const struct chip_task *t = arg;
    int id = worker_submit_chip(job, t->chip, t->kernel, t->kargs, t->n);
    return id < 0 ? id : 0;
}

/* Run one chip task on w; its wait result, its error text in err. */
static int run_chip_task(worker *w, const struct chip_task *t, char *err,
                         size_t size)
{
    worker_job *job;
    int rc = worker_submit(w, one_chip_task, (void *)t, &job);
    assert_int_equal(rc, 0);
    rc = worker_wait(job, rt_bound_s(5.0));
    snprintf(err, size, "%s", worker_job_error(job));
    worker_job_free(job);
    return rc;
}

static worker *chips_up(unsigned n)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    char spec[32];
    snprintf(spec, sizeof(spec), "L3{chip*%u}", n);
    assert_int_equal(mpfw_tree_spin_up(&t, spec, &o), 0);
    return mpfw_tree_root(t);
}

/* ---- chip kernels, one shape: task -> rc -> the child's exact error ----
   A row spins up `chips` chips and runs its tasks one after another, each
   in its own run: each comes back with `rc` and exactly `error` ("" for a
   task that succeeds: a refused kernel does not poison its chip). A list
   ends at a task without an error. */
struct kernel_probe {
    struct chip_task task;
    int rc;
    const char *error;
};

struct kernel_case {
    /* cppcheck-suppress unusedStructMember ; rt_table.h reads it */
    const char *name;
    unsigned chips;
    const struct kernel_probe *probes;
};
RT_ROW_NAME_FIRST(struct kernel_case);

static const struct kernel_case kernel_cases[] = {
    { "kernels_check_their_argument_count", 2,
      (const struct kernel_probe[]){
          { { 1, WORKER_KERNEL_VECTOR_ADD, 3, { 0, 64, 128 } },
            -EIO,
            "chip dev=1: vector_add needs 4 arguments (got 3)" },
          { { 0, WORKER_KERNEL_FILL, 2, { 0, 4 } },
            -EIO,
            "chip dev=0: fill needs 3 arguments (got 2)" },
          { { 0, WORKER_KERNEL_CHECKSUM, 1, { 0 } },
            -EIO,
            "chip dev=0: checksum needs 2 arguments (got 1)" },
          /* The chip is still usable. */
          { { 0, WORKER_KERNEL_CHECKSUM, 2, { 0, 4 } }, 0, "" },
          { { 0, 0, 0, { 0 } }, 0, NULL } } },
    { "kernels_stay_inside_device_memory", 1,
      (const struct kernel_probe[]){
          /* Region 7 was never allocated. */
          { { 0, WORKER_KERNEL_FILL, 3, { WORKER_DEVPTR(7, 0), 4, 1 } },
            -EIO,
            "chip dev=0: device memory region 7 is not allocated" },
          /* A misaligned offset; a count past the end of the 64 KiB base. */
          { { 0, WORKER_KERNEL_CHECKSUM, 2, { WORKER_DEVPTR(0, 2), 1 } },
            -EIO,
            "chip dev=0: device memory access [region 0 + 2, 1 elements) out "
            "of range (65536 bytes)" },
          { { 0, WORKER_KERNEL_CHECKSUM, 2, { WORKER_DEVPTR(0, 65532), 2 } },
            -EIO,
            "chip dev=0: device memory access [region 0 + 65532, 2 elements) "
            "out of range (65536 bytes)" },
          /* The output span of vector_add is checked too (c starts at the
             end). */
          { { 0,
              WORKER_KERNEL_VECTOR_ADD,
              4,
              { WORKER_DEVPTR(0, 0), WORKER_DEVPTR(0, 0),
                WORKER_DEVPTR(0, 65536), 1 } },
            -EIO,
            "chip dev=0: device memory access [region 0 + 65536, 1 elements) "
            "out of range (65536 bytes)" },
          { { 0, 0, 0, { 0 } }, 0, NULL } } },
    { "sleep_kernel_refuses_more_than_an_hour", 1,
      (const struct kernel_probe[]){
          { { 0, WORKER_KERNEL_SLEEP, 1, { 3600001 } },
            -EIO,
            "chip dev=0: sleep of 3600001 ms is over an hour" },
          { { 0, WORKER_KERNEL_SLEEP, 1, { 1 } }, 0, "" },
          { { 0, 0, 0, { 0 } }, 0, NULL } } },
};

static void every_task_comes_back_as_its_row_says(void **state)
{
    const struct kernel_case *row = rt_row(state);
    worker *w = chips_up(row->chips);
    char err[WORKER_ERROR_MAX];

    for (const struct kernel_probe *p = row->probes; p->error; p++) {
        int rc = run_chip_task(w, &p->task, err, sizeof(err));
        if (rc != p->rc || strcmp(err, p->error) != 0)
            fail_msg("task %u: %d \"%s\", expected %d \"%s\"",
                     (unsigned)(p - row->probes), rc, err, p->rc, p->error);
    }
}

/* ---- sub callables ---- */

static int fail_silently(void *arg, const void *args, size_t len, char *msg,
                         size_t msg_size)
{
    (void)arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)msg_size;
    return 3;
}

static int one_sub_task(worker_job *job, void *arg)
{
    (void)arg;
    int id = worker_submit_sub(job, 0, 0, NULL, 0);
    return id < 0 ? id : 0;
}

static void callable_failing_without_a_message_is_named(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "quiet", fail_silently, NULL), 0);
    assert_int_equal(worker_init(w), 0);

    rt_run_fails_with(w, one_sub_task, NULL,
                      "sub_worker: callable 'quiet' failed with code 3");
}

/* ---- the caller's side of a run ---- */

struct kept {
    worker_job *job;
    int bad_dep_rc;
    char bad_dep_error[WORKER_ERROR_MAX];
};

/* Submits one task, tries a dependency on a task that does not exist yet,
   and keeps the job handle for after it returned. */
static int keep_the_job(worker_job *job, void *arg)
{
    struct kept *k = arg;
    worker_task t = WORKER_TASK_INIT;
    int dep = 1;

    k->job = job;
    if (worker_submit_sub(job, 0, 0, NULL, 0) != 0)
        return -EIO;
    t.target = 0;
    t.deps = &dep;
    t.ndeps = 1;
    k->bad_dep_rc = worker_submit_task(job, &t);
    snprintf(k->bad_dep_error, sizeof(k->bad_dep_error), "%s",
             worker_last_error(worker_job_worker(job)));
    return 0;
}

static void submit_after_the_orchestration_returned_is_refused(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct kept k = { 0 };
    uint64_t v = 1;
    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "noop", rt_noop_sub, NULL), 0);
    assert_int_equal(worker_init(w), 0);

    worker_job *job;
    assert_int_equal(worker_submit(w, keep_the_job, &k, &job), 0);
    assert_ptr_equal(k.job, job);
    assert_int_equal(k.bad_dep_rc, -EINVAL);
    assert_string_equal(k.bad_dep_error,
                        "submit: dependency is not an earlier task of this "
                        "run");
    assert_int_equal(worker_submit_sub(job, 0, 0, NULL, 0), -EPERM);
    assert_string_equal(worker_last_error(w),
                        "submit: the orchestration function of this run has "
                        "returned");
    /* Task ids: only the one task exists; a wait for it is bounded. */
    assert_int_equal(worker_task_wait(job, 1, 0), -ENOENT);
    assert_int_equal(worker_task_wait(job, 0, rt_bound_s(5.0)), 0);
    assert_int_equal(worker_job_result(job, 0, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(worker_job_result(job, 1, &v), -ENOENT);
    assert_int_equal(worker_job_result(NULL, 0, &v), -EINVAL);
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), 0);
    /* A timeout past the clock's range is capped, not wrapped: a finished
       job still answers at once. */
    assert_int_equal(worker_wait(job, 1e10), 0);
    worker_job_free(job);
    /* NULL job handles: neutral answers, no crash. */
    worker_job_free(NULL);
    assert_string_equal(worker_job_error(NULL), "");
    assert_null(worker_job_worker(NULL));
    size_t len = 9;
    assert_null(worker_job_args(NULL, &len));
    assert_int_equal(len, 0);
    assert_int_equal(worker_job_fail(NULL, -EDOM, "%s", "x"), -EDOM);
}

static int fail_with(worker_job *job, void *arg)
{
    (void)job;
    return *(const int *)arg;
}

static void orchestration_failing_without_a_message_is_named(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);

    int code = -EDOM;
    assert_int_equal(worker_run(w, fail_with, &code), -EDOM);
    assert_string_equal(worker_last_error(w),
                        "orchestration function failed: Numerical argument "
                        "out of domain");
    code = 7;
    worker_job *job = NULL;
    assert_int_equal(worker_submit(w, fail_with, &code, &job), 7);
    assert_null(job);
    assert_string_equal(worker_last_error(w),
                        "orchestration function failed: non-zero return");
}

static int sleep_on_chip(worker_job *job, void *arg)
{
    (void)arg;
    /* Long enough that the waits below run while it sleeps, also under
       valgrind (scaled). */
    uint64_t ms = (uint64_t)(rt_bound_s(0.5) * 1000);
    int id = worker_submit_chip(job, 0, WORKER_KERNEL_SLEEP, &ms, 1);
    return id < 0 ? id : 0;
}

static void task_wait_times_out_and_can_wait_again(void **state)
{
    (void)state;
    worker *w = chips_up(1);
    worker_job *job;

    assert_int_equal(worker_submit(w, sleep_on_chip, NULL, &job), 0);
    assert_int_equal(worker_task_wait(job, 0, 0.0), -ETIMEDOUT);
    assert_int_equal(worker_task_wait(job, 0, 0.01), -ETIMEDOUT);
    uint64_t v;
    assert_int_equal(worker_job_result(job, 0, &v), -EINPROGRESS);
    assert_int_equal(worker_task_wait(job, 0, -2.0), -EINVAL);
    assert_int_equal(worker_task_wait(NULL, 0, 1.0), -EINVAL);
    /* The task is still the one of the job: a later wait gets it. */
    assert_int_equal(worker_wait(job, rt_bound_s(10.0)), 0);
    worker_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(callable_failing_without_a_message_is_named, 5000),
        mpfw_unit_test(submit_after_the_orchestration_returned_is_refused,
                       5000),
        mpfw_unit_test(orchestration_failing_without_a_message_is_named, 5000),
        mpfw_unit_test(task_wait_times_out_and_can_wait_again, 5000),
    };
    const struct rt_table tables[] = {
        RT_TABLE(kernel_cases, every_task_comes_back_as_its_row_says, 5000),
    };
    return rt_run_group_tests(tests, tables);
}
