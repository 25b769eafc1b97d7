/* SPDX-License-Identifier: MIT */
/*
 * test_census_kill.c — census.c on its own (compiled in: it is internal):
 * what the guard finds to kill, and what it may kill.
 *   - a chain of four processes, each the child of the one before: the
 *     census lists every level, not only the first two;
 *   - a child forked by a second thread that is still alive: it is listed
 *     (it is in that thread's children file, not the main thread's);
 *   - a kill of a process whose start time is not the one the census saw
 *     (its pid was reused meanwhile) sends nothing; with the right start
 *     time the process dies of SIGKILL.
 * Prints "ok" when every check holds; every process it made is reaped.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fixture/inprocess_check.h"
#include "base/base.h"
#include "census/census.h"

static struct mpf__procs procs;

static bool listed(pid_t pid)
{
    for (size_t i = 0; i < procs.n; i++)
        if (procs.v[i].pid == pid)
            return true;
    return false;
}

/* Every process below this one: killed, then reaped (this process is a
   subreaper, so the deeper ones come back to it). */
static void kill_all(void)
{
    mpf__census(getpid(), NULL, 0, &procs);
    for (size_t i = 0; i < procs.n; i++)
        kill(procs.v[i].pid, SIGKILL);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
}

/* Fork `depth` processes in a chain; the last writes its pid (and each
   the pid of its child before it) to `fd`: the caller reads all `depth`
   pids, the deepest last. */
static _Noreturn void chain(int depth, int fd)
{
    /* Each level writes its pid, then forks the next (which goes on with
       the loop) and pauses. */
    for (int level = depth;; level--) {
        pid_t self = getpid();
        if (write(fd, &self, sizeof self) != (ssize_t)sizeof self)
            _exit(1);
        if (level == 1 || fork() != 0)
            break;
    }
    for (;;)
        pause();
}

static int every_level_is_listed(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
    pid_t pids[4];
    if (fork() == 0) {
        close(p[0]);
        chain(4, p[1]);
    }
    close(p[1]);
    for (int i = 0; i < 4; i++)
        CHECK(read(p[0], &pids[i], sizeof pids[i]) == (ssize_t)sizeof pids[i],
              "level %d did not start", i + 1);
    close(p[0]);
    size_t n = mpf__census(getpid(), NULL, 0, &procs);
    for (int i = 0; i < 4; i++)
        CHECK(listed(pids[i]), "level %d (pid %d) is not listed (%zu listed)",
              i + 1, (int)pids[i], n);
    kill_all();
    return 0;
}

static int ready[2], release[2];
static pid_t thread_child;

static void *fork_from_a_thread(void *arg)
{
    (void)arg;
    thread_child = fork();
    if (thread_child == 0)
        for (;;)
            pause();
    char c = 1;
    if (write(ready[1], &c, 1) != 1 || read(release[0], &c, 1) < 0)
        return NULL;
    return NULL;
}

static int child_of_a_second_thread_is_listed(void)
{
    CHECK(pipe(ready) == 0 && pipe(release) == 0, "pipe: %s", strerror(errno));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fork_from_a_thread, NULL) == 0,
          "pthread_create");
    char c;
    CHECK(read(ready[0], &c, 1) == 1, "the thread did not fork");
    bool found = thread_child > 0 &&
                 (mpf__census(getpid(), NULL, 0, &procs), listed(thread_child));
    c = 1; /* the thread ends (its child holds the pipe too: no EOF) */
    CHECK(write(release[1], &c, 1) == 1, "release: %s", strerror(errno));
    pthread_join(t, NULL);
    close(ready[0]);
    close(ready[1]);
    close(release[0]);
    close(release[1]);
    kill_all();
    CHECK(found, "the child (pid %d) of a live second thread is not listed",
          (int)thread_child);
    return 0;
}

/* A child that pauses, with SIGTERM deliverable whatever it inherited. */
static pid_t pausing_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        (void)signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (;;)
            pause();
    }
    return pid;
}

static int kill_checks_the_start_time(void)
{
    pid_t pid = pausing_child();
    CHECK(pid > 0, "fork: %s", strerror(errno));
    struct mpf__proc p;
    CHECK(mpf__proc_stat(pid, &p) == 0, "stat of pid %d", (int)pid);
    struct mpf__proc reused = p;
    reused.start = p.start + 1; /* as if the pid had been reused */
    CHECK(mpf__kill_proc(&reused) != 0, "a kill by a stale identity was sent");
    /* Had SIGKILL been sent, it would be the cause of death whatever
       comes after it: the process dies of this SIGTERM only if not. */
    kill(pid, SIGTERM);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
              WTERMSIG(st) == SIGTERM,
          "a process whose start time differs was SIGKILLed (status %#x)", st);
    /* The control: the right identity kills. */
    pid = pausing_child();
    CHECK(pid > 0 && mpf__proc_stat(pid, &p) == 0, "second child");
    CHECK(mpf__kill_proc(&p) == 0, "the kill by the right identity failed");
    CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
              WTERMSIG(st) == SIGKILL,
          "the right identity did not kill (status %#x)", st);
    return 0;
}

int main(void)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        perror("PR_SET_CHILD_SUBREAPER");
        return 1;
    }
    int rc = every_level_is_listed() || child_of_a_second_thread_is_listed() ||
             kill_checks_the_start_time();
    if (rc)
        kill_all();
    puts(rc ? "FAILED" : "ok");
    return rc;
}
