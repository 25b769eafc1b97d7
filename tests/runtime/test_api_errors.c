/* SPDX-License-Identifier: MIT */
/*
 * test_api_errors.c — the runtime's public calls refuse what they cannot
 * honour with an exact negative errno and an exact last-error message, and
 * nothing is submitted, registered or started: bad callables at register,
 * bad tasks at submit (each target kind, each size), a wait from the job's
 * own orchestration function. Every case under the fixture's guard.
 */
#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>

#include "rt_helpers.h"

static int noop_orch(worker_job *job, void *arg)
{
    (void)job;
    (void)arg;
    return 0;
}

/* ---- register ---- */

static void register_refuses_a_null_function_and_a_long_name(void **state)
{
    (void)state;
    mpfw_tree *t;
    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", NULL), 0);
    worker *w = mpfw_tree_root(t);

    assert_int_equal(worker_register_sub(w, "x", NULL, NULL), -EINVAL);
    assert_string_equal(worker_last_error(w), "register: NULL function");
    char name[WORKER_CALLABLE_NAME_MAX + 1];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    assert_int_equal(worker_register_orch(w, name, noop_orch, NULL), -EINVAL);
    assert_string_equal(worker_last_error(w), "register: name too long");
    /* One byte shorter fits (the NUL makes WORKER_CALLABLE_NAME_MAX). */
    name[WORKER_CALLABLE_NAME_MAX - 1] = '\0';
    assert_int_equal(worker_register_orch(w, name, noop_orch, NULL), 0);
    assert_int_equal(worker_register_sub(NULL, "x", rt_noop_sub, NULL),
                     -EINVAL);
    assert_int_equal(worker_register_orch(NULL, "x", noop_orch, NULL), -EINVAL);
}

static void register_stops_at_the_callable_limit(void **state)
{
    (void)state;
    mpfw_tree *t;
    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", NULL), 0);
    worker *w = mpfw_tree_root(t);

    for (int i = 0; i < WORKER_MAX_CALLABLES; i++)
        assert_int_equal(worker_register_sub(w, NULL, rt_noop_sub, NULL), i);
    assert_int_equal(worker_register_sub(w, "one_more", rt_noop_sub, NULL),
                     -ENOSPC);
    assert_string_equal(worker_last_error(w), "register: at most 64 callables");
}

static void register_after_a_failed_startup_is_refused(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_new(&t, "L3{sub:fail(no)}", &o), 0);
    worker *w = mpfw_tree_root(t);

    assert_int_equal(worker_init(w), -EIO);
    assert_int_equal(worker_get_state(w), WORKER_FAILED);
    assert_int_equal(worker_register_sub(w, "late", rt_noop_sub, NULL), -EPERM);
    assert_string_equal(worker_last_error(w),
                        "register: startup failed; close "
                        "this worker and create a new one");
}

/* ---- submit ---- */

struct refusal {
    worker_task task;
    int rc;
    char error[WORKER_ERROR_MAX];
};

struct refusals {
    struct refusal r[12];
    unsigned n;
    int wait_rc;
    char wait_error[WORKER_ERROR_MAX];
};

static int submit_bad_tasks(worker_job *job, void *arg)
{
    struct refusals *rs = arg;
    worker *w = worker_job_worker(job);
    for (unsigned i = 0; i < rs->n; i++) {
        rs->r[i].rc = worker_submit_task(job, &rs->r[i].task);
        snprintf(rs->r[i].error, sizeof rs->r[i].error, "%s",
                 worker_last_error(w));
    }
    rs->wait_rc = worker_wait(job, 1.0);
    snprintf(rs->wait_error, sizeof rs->wait_error, "%s", worker_last_error(w));
    return 0;
}

struct bad_task {
    worker_task task;
    const char *error; /* refused with -EINVAL and exactly this */
};

/* Submit each of bad[] from one run of w: every one is refused with its
   error; then the orchestration's wait on its own job. */
static void expect_refusals(worker *w, const struct bad_task *bad, unsigned n)
{
    static struct refusals rs;

    assert_true(n <= sizeof(rs.r) / sizeof(rs.r[0]));
    memset(&rs, 0, sizeof rs);
    rs.n = n;
    for (unsigned i = 0; i < n; i++)
        rs.r[i].task = bad[i].task;
    assert_int_equal(worker_run(w, submit_bad_tasks, &rs), 0);
    for (unsigned i = 0; i < rs.n; i++) {
        if (rs.r[i].rc != -EINVAL || strcmp(rs.r[i].error, bad[i].error) != 0)
            fail_msg("task %u: %d \"%s\", expected -EINVAL \"%s\"", i,
                     rs.r[i].rc, rs.r[i].error, bad[i].error);
    }
    /* The job's own orchestration function cannot wait for the job. */
    assert_int_equal(rs.wait_rc, -EDEADLK);
    assert_string_equal(rs.wait_error, "wait: called from the job's own "
                                       "orchestration function");
}

static void submit_refuses_each_bad_task_with_its_reason(void **state)
{
    (void)state;
    static char blob[WORKER_TASK_ARGS_MAX + 1];
    static const uint64_t kargs[WORKER_KERNEL_ARGS_MAX + 1];
    static const struct bad_task bad[] = {
        { { WORKER_CHILD_SUB, 2, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no sub worker 2 (the worker has 2)" },
        { { WORKER_CHILD_SUB, -7, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no sub worker -7 (the worker has 2)" },
        { { WORKER_CHILD_SUB, WORKER_ANY, 1, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no sub callable with id 1 (ids come from "
          "worker_register_sub)" },
        { { WORKER_CHILD_SUB, 0, 0, blob, sizeof blob, NULL, 0, NULL, 0 },
          "submit: argument blob of 3073 bytes (at most 3072)" },
        { { WORKER_CHILD_SUB, 0, 0, NULL, 4, NULL, 0, NULL, 0 },
          "submit: argument blob of 4 bytes (at most 3072)" },
        { { WORKER_CHILD_CHIP, 1, WORKER_KERNEL_NOOP, NULL, 0, NULL, 0, NULL,
            0 },
          "submit: no chip 1 (the worker has 1)" },
        { { WORKER_CHILD_CHIP, 0, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no kernel with id 0" },
        { { WORKER_CHILD_CHIP, 0, WORKER_KERNEL_NOOP, NULL, 0, kargs,
            WORKER_KERNEL_ARGS_MAX + 1, NULL, 0 },
          "submit: 7 kernel arguments (at most 6)" },
        { { WORKER_CHILD_NEXT, 0, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no next-level worker with id 0 (the worker has 0)" },
        { { (worker_child_kind)9, 0, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: unknown target kind 9" },
    };
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_new(&t, "L3{sub*2,chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "noop", rt_noop_sub, NULL), 0);
    assert_int_equal(worker_init(w), 0);
    expect_refusals(w, bad, sizeof bad / sizeof bad[0]);
}

static int null_task(worker_job *job, void *arg)
{
    (void)arg;
    return worker_submit_task(job, NULL) == -EINVAL &&
                   worker_submit_task(NULL, NULL) == -EINVAL
               ? 0
               : -EIO;
}

/* The other half of each check: a negative chip or next-level id, a kernel
   id past the last, arguments without their array, next-level callables
   and blobs, dependencies. */
static void submit_refuses_bad_chip_next_and_dependency_fields(void **state)
{
    (void)state;
    static char blob[WORKER_TASK_ARGS_MAX + 1];
    static const int before_first[1] = { -1 };
    static const struct bad_task chip[] = {
        { { WORKER_CHILD_CHIP, -1, WORKER_KERNEL_NOOP, NULL, 0, NULL, 0, NULL,
            0 },
          "submit: no chip -1 (the worker has 1)" },
        { { WORKER_CHILD_CHIP, 0, 99, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no kernel with id 99" },
        { { WORKER_CHILD_CHIP, 0, WORKER_KERNEL_NOOP, NULL, 0, NULL, 2, NULL,
            0 },
          "submit: 2 kernel arguments (at most 6)" },
    };
    static const struct bad_task next[] = {
        { { WORKER_CHILD_NEXT, -1, 0, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no next-level worker with id -1 (the worker has 1)" },
        { { WORKER_CHILD_NEXT, 0, 1, NULL, 0, NULL, 0, NULL, 0 },
          "submit: no orchestration callable with id 1 on next-level worker "
          "0 (ids come from worker_register_orch on it)" },
        { { WORKER_CHILD_NEXT, 0, 0, blob, sizeof blob, NULL, 0, NULL, 0 },
          "submit: argument blob of 3073 bytes (at most 3072)" },
        { { WORKER_CHILD_NEXT, 0, 0, NULL, 4, NULL, 0, NULL, 0 },
          "submit: argument blob of 4 bytes (at most 3072)" },
        { { WORKER_CHILD_SUB, 0, 0, NULL, 0, NULL, 0, NULL, 1 },
          "submit: deps is NULL" },
        { { WORKER_CHILD_SUB, 0, 0, NULL, 0, NULL, 0, before_first, 1 },
          "submit: dependency is not an earlier task of this run" },
    };
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{chip}", &o), 0);
    expect_refusals(mpfw_tree_root(t), chip, sizeof chip / sizeof chip[0]);
    assert_int_equal(worker_run(mpfw_tree_root(t), null_task, NULL), 0);

    assert_int_equal(mpfw_tree_new(&t, "L4{sub,L3{sub}}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_register_sub(w, "noop", rt_noop_sub, NULL), 0);
    assert_int_equal(worker_register_orch(mpfw_tree_find(t, "next.0"), "o",
                                          noop_orch, NULL),
                     0);
    assert_int_equal(worker_init(w), 0);
    expect_refusals(w, next, sizeof next / sizeof next[0]);
}

static void submit_to_a_worker_without_subs_names_it(void **state)
{
    (void)state;
    static const struct bad_task bad[] = {
        { WORKER_TASK_INIT, "submit: the worker has no sub workers" },
    };
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_new(&t, "L3{chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_init(w), 0);
    expect_refusals(w, bad, sizeof bad / sizeof bad[0]);
}

static void run_after_close_is_refused(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_init(w), 0);
    assert_int_equal(worker_close(w), 0);

    worker_job *job = NULL;
    assert_int_equal(worker_submit(w, noop_orch, NULL, &job), -ESHUTDOWN);
    assert_null(job);
    assert_int_equal(worker_run(w, noop_orch, NULL), -ESHUTDOWN);
    assert_int_equal(worker_submit(w, NULL, NULL, &job), -EINVAL);
    assert_int_equal(worker_submit(w, noop_orch, NULL, NULL), -EINVAL);
}

/* ---- topology and accessors ---- */

static void add_child_checks_level_and_the_child_limit(void **state)
{
    (void)state;
    worker_options o = WORKER_OPTIONS_INIT;
    worker *l3, *l4, *kids[WORKER_MAX_NEXT + 1];

    assert_int_equal(worker_new(&l3, &o), 0);
    o.level = 4;
    assert_int_equal(worker_new(&l4, &o), 0);
    assert_int_equal(worker_add_child(l3, l4), -EINVAL);
    assert_string_equal(worker_last_error(l3),
                        "next-level children need level >= 4 (level 3)");
    o.level = 3;
    for (int i = 0; i <= WORKER_MAX_NEXT; i++)
        assert_int_equal(worker_new(&kids[i], &o), 0);
    for (int i = 0; i < WORKER_MAX_NEXT; i++)
        assert_int_equal(worker_add_child(l4, kids[i]), i);
    assert_int_equal(worker_add_child(l4, kids[WORKER_MAX_NEXT]), -ENOSPC);
    assert_string_equal(worker_last_error(l4),
                        "at most 16 next-level children");
    assert_ptr_equal(worker_next_child(l4, 15), kids[15]);
    assert_null(worker_next_child(l4, 16));
    assert_int_equal(worker_level(l4), 4);
    assert_int_equal(worker_level(NULL), -EINVAL);
    worker_free(kids[WORKER_MAX_NEXT]);
    worker_free(l4); /* frees its 16 children */
    worker_free(l3);
}

static void accessors_answer_before_init_and_for_null(void **state)
{
    (void)state;
    worker *w;
    worker_rollback_report r;
    pid_t pids[1];

    assert_int_equal(worker_new(&w, NULL), 0);
    assert_int_equal(worker_last_close(w, &r), -ENOENT);
    assert_int_equal(worker_last_close(NULL, &r), -EINVAL);
    assert_int_equal(worker_last_close(w, NULL), -EINVAL);
    assert_int_equal(worker_last_rollback(w, &r), -ENOENT);
    assert_int_equal(worker_last_rollback(NULL, &r), -EINVAL);
    assert_int_equal(worker_child_pids(NULL, WORKER_CHILD_SUB, pids, 1), 0);
    assert_int_equal(worker_chip_pipeline_depth(NULL, 0), -EINVAL);
    assert_int_equal(worker_chip_pipeline_depth(w, 0), -ENOENT);
    assert_int_equal(worker_get_state(NULL), WORKER_CLOSED);
    assert_string_equal(worker_last_error(NULL), "");
    assert_string_equal(worker_startup_error(NULL), "");
    assert_string_equal(worker_shm_prefix(w), "");
    assert_int_equal(worker_journal_size(NULL), 0);
    worker_free(w);
}

/* ---- init preconditions ---- */

static void init_refuses_an_ignored_sigchld(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    struct sigaction ign, nocldwait, old;

    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
    int rc = worker_init(w);
    nocldwait = old;
    nocldwait.sa_flags |= SA_NOCLDWAIT;
    sigaction(SIGCHLD, &nocldwait, NULL);
    int rc2 = worker_init(w);
    sigaction(SIGCHLD, &old, NULL);
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(rc2, -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "SIGCHLD is ignored (or SA_NOCLDWAIT): children "
                        "would be auto-reaped");
    /* Refused before anything started: still NEW, and init works now. */
    assert_int_equal(worker_get_state(w), WORKER_NEW);
    assert_int_equal(worker_init(w), 0);
}

static void init_refuses_a_bad_worker_faults_variable(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    assert_int_equal(mpfw_tree_new(&t, "L3{sub}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(setenv("WORKER_FAULTS", "root:no_such_point=hang", 1), 0);
    int rc = worker_init(w);
    unsetenv("WORKER_FAULTS");
    assert_int_equal(rc, -EINVAL);
    assert_contains(worker_last_error(w), "faults: ");
    assert_contains(worker_last_error(w), "no_such_point");
    assert_int_equal(worker_get_state(w), WORKER_NEW);
    assert_int_equal(worker_init(w), 0);
}

static void nested_worker_and_device_calls_refuse_bad_handles(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p = 0;
    char buf[4];

    assert_int_equal(mpfw_tree_spin_up(&t, "L4{L3{chip}}", &o), 0);
    worker *nested = mpfw_tree_find(t, "next.0");
    assert_non_null(nested);
    /* A next-level worker runs only inside its parent's tree. */
    assert_int_equal(worker_run(nested, noop_orch, NULL), -EPERM);
    assert_string_equal(worker_last_error(nested),
                        "run: a worker attached as a child runs in its "
                        "parent's tree");
    assert_int_equal(worker_device_alloc(NULL, 0, 4, &p), -EINVAL);
    assert_int_equal(worker_device_alloc(nested, 0, 4, NULL), -EINVAL);
    assert_int_equal(worker_device_free(NULL, 0, p), -EINVAL);
    assert_int_equal(worker_device_copy_to(NULL, 0, p, buf, 4), -EINVAL);
    assert_int_equal(worker_device_copy_to(nested, 0, p, NULL, 4), -EINVAL);
    assert_int_equal(worker_device_copy_from(NULL, 0, buf, p, 4), -EINVAL);
    assert_int_equal(worker_device_copy_from(nested, 0, NULL, p, 4), -EINVAL);
    assert_int_equal(worker_device_allocations(NULL), 0);
}

static void device_calls_name_what_they_refuse(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_devptr p;
    uint32_t buf[4] = { 0 };

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(worker_device_alloc(w, 0,
                                         (size_t)WORKER_DEVICE_ALLOC_MAX + 1,
                                         &p),
                     -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "device_alloc: 1073741825 bytes (must be "
                        "1..1073741824)");
    assert_int_equal(worker_device_free(w, 0, WORKER_DEVPTR(0, 0)), -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "device_free: 0 is not an allocation's start");
    assert_int_equal(worker_device_free(w, 0, WORKER_DEVPTR(5, 0)), -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "device_free: chip 0 has no allocation 5");
    assert_int_equal(worker_device_copy_to(w, 3, WORKER_DEVPTR(0, 0), buf, 4),
                     -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "device copy: chip 3 has no region 0");
    assert_int_equal(worker_device_copy_from(w, 0, buf, WORKER_DEVPTR(0, 65532),
                                             sizeof(buf)),
                     -EINVAL);
    assert_string_equal(worker_last_error(w),
                        "device copy: [65532, +16) out of region 0 of chip 0");
    /* Zero bytes need no buffer. */
    assert_int_equal(worker_device_copy_to(w, 0, WORKER_DEVPTR(0, 0), NULL, 0),
                     0);
    assert_int_equal(worker_device_copy_from(w, 0, NULL, WORKER_DEVPTR(0, 0),
                                             0),
                     0);
}

static void pid_lists_and_names_answer_for_any_input(void **state)
{
    (void)state;
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();
    worker_rollback_report r;
    pid_t pids[3] = { -1, -1, -1 };

    assert_int_equal(mpfw_tree_spin_up(&t, "L3{sub*3,chip}", &o), 0);
    worker *w = mpfw_tree_root(t);
    /* The count without a buffer; a short buffer gets the first ones. */
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_SUB, NULL, 0), 3);
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_SUB, pids, 1), 3);
    assert_int_equal(pids[0], rt_child_pid(w, WORKER_CHILD_SUB, 0));
    assert_int_equal(pids[1], -1);
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_NEXT, pids, 3), 0);
    assert_int_equal(worker_chip_pipeline_depth(w, 0), 1);
    assert_int_equal(worker_chip_pipeline_depth(w, 1), -ENOENT);
    assert_null(worker_next_child(NULL, 0));
    assert_int_equal(worker_last_rollback(w, NULL), -EINVAL);
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_last_close(w, &r), 0);
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_SUB, pids, 3), 0);
    assert_int_equal(worker_chip_pipeline_depth(w, 0), -ENOENT);
    /* Names of values out of range. */
    assert_string_equal(worker_state_name((worker_state)9), "?");
    assert_string_equal(worker_child_kind_name((worker_child_kind)9), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(register_refuses_a_null_function_and_a_long_name, 5000),
        mpfw_unit_test(register_stops_at_the_callable_limit, 5000),
        mpfw_unit_test(register_after_a_failed_startup_is_refused, 5000),
        mpfw_unit_test(submit_refuses_each_bad_task_with_its_reason, 5000),
        mpfw_unit_test(submit_to_a_worker_without_subs_names_it, 5000),
        mpfw_unit_test(submit_refuses_bad_chip_next_and_dependency_fields,
                       5000),
        mpfw_unit_test(run_after_close_is_refused, 5000),
        mpfw_unit_test(add_child_checks_level_and_the_child_limit, 5000),
        mpfw_unit_test(accessors_answer_before_init_and_for_null, 5000),
        mpfw_unit_test(init_refuses_an_ignored_sigchld, 5000),
        mpfw_unit_test(init_refuses_a_bad_worker_faults_variable, 5000),
        mpfw_unit_test(nested_worker_and_device_calls_refuse_bad_handles, 5000),
        mpfw_unit_test(device_calls_name_what_they_refuse, 5000),
        mpfw_unit_test(pid_lists_and_names_answer_for_any_input, 5000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
