/* SPDX-License-Identifier: MIT */
/*
 * rt_helpers.h — small helpers shared by the runtime's suites (header-only,
 * static functions: each suite is one translation unit).
 */
#ifndef RT_HELPERS_H
#define RT_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>
/* The library's reader of /proc/<pid>/task/<tid>/children (header-only). */
#include "../../runtime/src/proc/children.h"

/* Options for trees in tests: deadlines well above what a loaded 2-core
   machine needs, well below the case budgets. */
static inline mpfw_options rt_fast_options(void)
{
    mpfw_options o = MPFW_OPTIONS_INIT;
    o.startup_timeout_s = 5;
    o.rollback_timeout_s = 1;
    o.close_timeout_s = 2;
    return o;
}

static inline double rt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A wall-clock bound of the plain build ("reports within 100 ms"), scaled
   as the fixture scales budgets: x20 under valgrind, x3 under ASan or TSan,
   times MPF_BUDGET_SCALE (mpf_time_scale()). Lower bounds set by a
   deadline the test chose are not scaled: the runtime keeps them as given. */
static inline double rt_bound_s(double plain_s)
{
    return plain_s * mpf_time_scale();
}

/* ---- waiting for a process to exit, with or without pidfds ----
   Through its pidfd where the kernel has pidfd_open. Valgrind 3.19 answers
   it with ENOSYS (runtime/src/proc/procfd.c falls back there too): then, for a
   child of ours, a thread blocked in waitid(WNOWAIT) plays the pidfd's
   role, so the wait is still a blocking one with a bound, not a poll loop. */

struct rt_waiter_ {
    pid_t pid;
    int efd;
};

static inline void *rt_waiter_main_(void *arg)
{
    struct rt_waiter_ *a = (struct rt_waiter_ *)arg;
    siginfo_t si;
    uint64_t one = 1;
    while (waitid(P_PID, (id_t)a->pid, &si, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR)
        ;
    if (write(a->efd, &one, sizeof one) != sizeof one)
        abort(); /* an eventfd write of 1 cannot fail */
    return NULL;
}

/* Wait up to timeout_ms for pid to exit, leaving it unreaped. 0: it has
   exited (or no longer exists); -ETIMEDOUT: it was still running at the
   deadline, and has been SIGKILLed then (never left behind); -ECHILD:
   without pidfds, pid is alive but not a child of ours (cannot be waited
   for); another -errno if pidfd_open failed otherwise. */
static inline int rt_await_exit(pid_t pid, int timeout_ms)
{
    int fd = pidfd_open(pid, 0);
    if (fd >= 0) {
        struct pollfd p = { fd, POLLIN, 0 };
        int n = poll(&p, 1, timeout_ms);
        if (n != 1)
            pidfd_send_signal(fd, SIGKILL, NULL, 0);
        close(fd);
        return n == 1 ? 0 : -ETIMEDOUT;
    }
    if (errno == ESRCH)
        return 0;
    if (errno != ENOSYS)
        return -errno;
    /* No pidfds (valgrind). A child of ours cannot be reused before we
       reap it, so its pid is as good as a pidfd. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD && kill(pid, 0) == 0 ? -ECHILD : 0;
    if (si.si_pid == pid)
        return 0; /* exited already */
    struct rt_waiter_ a = { pid, eventfd(0, EFD_CLOEXEC) };
    pthread_t th;
    if (a.efd < 0)
        return -errno;
    int rc = pthread_create(&th, NULL, rt_waiter_main_, &a);
    if (rc != 0) {
        close(a.efd);
        return -rc;
    }
    struct pollfd p = { a.efd, POLLIN, 0 };
    int n = poll(&p, 1, timeout_ms);
    if (n != 1)
        kill(pid, SIGKILL); /* unreaped: still ours; ends the waiter too */
    pthread_join(th, NULL);
    close(a.efd);
    return n == 1 ? 0 : -ETIMEDOUT;
}

/* A sub callable that does nothing and succeeds. */
static inline int rt_noop_sub(void *arg, const void *args, size_t len,
                              char *msg, size_t msg_size)
{
    (void)arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)msg_size;
    return 0;
}

#define assert_contains(hay, needle)                        \
    do {                                                    \
        const char *h_ = (hay);                             \
        if (!h_ || !strstr(h_, (needle)))                   \
            fail_msg("expected \"%s\" in \"%s\"", (needle), \
                     h_ ? h_ : "(null)");                   \
    } while (0)

#define assert_not_contains(hay, needle)                               \
    do {                                                               \
        const char *h_ = (hay);                                        \
        if (h_ && strstr(h_, (needle)))                                \
            fail_msg("did not expect \"%s\" in \"%s\"", (needle), h_); \
    } while (0)

/* A child of ours that was reaped: waitpid says ECHILD. */
#define assert_reaped(pid)                                       \
    do {                                                         \
        pid_t p_ = (pid);                                        \
        errno = 0;                                               \
        if (waitpid(p_, NULL, WNOHANG) != -1 || errno != ECHILD) \
            fail_msg("pid %d is not reaped", (int)p_);           \
    } while (0)

/* A child of ours that is alive: waitpid WNOHANG returns 0. */
#define assert_alive(pid)                                    \
    do {                                                     \
        pid_t p_ = (pid);                                    \
        if (waitpid(p_, NULL, WNOHANG) != 0)                 \
            fail_msg("pid %d is not a live child", (int)p_); \
    } while (0)

/* A process that is not our child no longer exists. */
#define assert_gone(pid)                              \
    do {                                              \
        pid_t p_ = (pid);                             \
        if (kill(p_, 0) == 0 || errno != ESRCH)       \
            fail_msg("pid %d still exists", (int)p_); \
    } while (0)

/* A counter in MAP_SHARED memory: children's increments are visible. */
static inline _Atomic unsigned *rt_shared_counters(size_t n)
{
    void *p = mmap(NULL, n * sizeof(_Atomic unsigned), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static inline void rt_shared_free(_Atomic unsigned *c, size_t n)
{
    munmap((void *)c, n * sizeof(_Atomic unsigned));
}

/* A small /proc file of pid (leaf: "stat", "task/<pid>/children"…) into
   buf, NUL-terminated; its length, or 0 if it could not be read. */
static inline size_t rt_read_proc(pid_t pid, const char *leaf, char *buf,
                                  size_t size)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, leaf);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t len = read(fd, buf, size - 1);
    close(fd);
    if (len <= 0)
        return 0;
    buf[len] = '\0';
    return (size_t)len;
}

/* Children of pid's main thread, read from /proc (the library's reader,
   proc/children.h); returns the count. */
static inline size_t rt_children_of(pid_t pid, pid_t *out, size_t max)
{
    return worker__children_of_thread(pid, pid, out, max);
}

/* The pid of a worker's child (the case fails if there is none). */
static inline pid_t rt_child_pid(worker *w, worker_child_kind kind,
                                 unsigned index)
{
    pid_t pids[WORKER_MAX_CHILDREN];
    size_t n = worker_child_pids(w, kind, pids, WORKER_MAX_CHILDREN);
    assert_true(index < n);
    return pids[index];
}

/* A sub callable that bumps the _Atomic unsigned counter it was registered
   with. */
static inline int rt_count_call(void *arg, const void *args, size_t len,
                                char *msg, size_t size)
{
    (void)args;
    (void)len;
    (void)msg;
    (void)size;
    atomic_fetch_add((_Atomic unsigned *)arg, 1);
    return 0;
}

/* The seed report's case: an L4 whose second next-level child fails its
   init, so that the rollback reaps the first, and close() after it
   converges in one call. The startup suite runs it once, the load test
   hundreds of times beside CPU hogs. Returns the root, still valid (the
   fixture frees the tree at case end) for the caller's own checks. */
static inline worker *rt_seed_second_child_failure(void)
{
    mpfw_tree *t;
    mpfw_options o = rt_fast_options();

    int rc = mpfw_tree_spin_up(&t, "L4{L3{sub},L3{sub}:fail}", &o);
    worker *w = mpfw_tree_root(t);
    assert_int_equal(rc, -EIO);
    assert_contains(worker_last_error(w), "injected inner init failure");
    assert_int_equal(worker_child_pids(w, WORKER_CHILD_NEXT, NULL, 0), 0);
    /* The seed flake: close() after the rollback converges in one call. */
    assert_int_equal(mpfw_tree_close(t), 0);
    assert_int_equal(worker_journal_size(w), 0);
    return w;
}

/* A run of fn on w whose wait fails with -EIO and exactly `error`. */
static inline void rt_run_fails_with(worker *w, worker_orch_fn fn, void *arg,
                                     const char *error)
{
    worker_job *job;
    assert_int_equal(worker_submit(w, fn, arg, &job), 0);
    assert_int_equal(worker_wait(job, rt_bound_s(5.0)), -EIO);
    assert_string_equal(worker_job_error(job), error);
    worker_job_free(job);
}

#endif /* RT_HELPERS_H */
