/* SPDX-License-Identifier: MIT */
/*
 * procfd.c — a descriptor per child that turns readable when it exits,
 * and waits and signals through it.
 *
 * Normally this is the child's pidfd (pidfd_open right after fork). Where
 * the kernel interface is missing — valgrind 3.19 answers pidfd_open with
 * ENOSYS, and memcheck must run the runtime's own code paths — the same
 * role is played by an exit pipe:
 *   - the parent makes a pipe before fork; the child keeps the write end
 *     and nothing else; the parent keeps the read end;
 *   - the kernel closes the write end when the child exits, so the read
 *     end polls as POLLHUP exactly then (callers poll for POLLIN|POLLHUP);
 *   - every process forked by a child (its own children, a chip's
 *     grandchild) drops the inherited write end in a pthread_atfork child
 *     handler, so only the child itself holds it; it is close-on-exec.
 * Waits then go through waitid(P_PID) and signals through kill(): both are
 * safe for our own unreaped child, whose pid cannot be reused before we
 * reap it — the rule the pidfd path does not need to rely on.
 *
 * Also here: a child's wait status, peeked without reaping, and its text.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "internal.h"
#include "proc.h"

/* The write end of this process's own exit pipe (fallback only), and the
   one being handed to the child of a fork in progress. */
static int own_exit_wr = -1;
static int next_exit_wr = -1;

static void drop_inherited_exit_pipe(void)
{
    if (own_exit_wr >= 0)
        close(own_exit_wr);
    own_exit_wr = next_exit_wr; /* a fork of ours: the child's own end */
    next_exit_wr = -1;
}

static void install_fork_hook(void)
{
    pthread_atfork(NULL, NULL, drop_inherited_exit_pipe);
}

/* WORKER_PROCFD=pipe takes the fallback on a kernel with pidfds, so that
   the suites can prove it without valgrind. */
bool worker__pidfd_missing(void)
{
    static int missing = -1;
    if (missing < 0) {
        const char *force = getenv("WORKER_PROCFD");
        /* Under valgrind, not even a probe: it would warn of the syscall. */
        int fd = RUNNING_ON_VALGRIND
                     ? -1
                     : (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (RUNNING_ON_VALGRIND)
            errno = ENOSYS;
        missing = (fd < 0 && errno == ENOSYS) ||
                  (force && strcmp(force, "pipe") == 0);
        if (fd >= 0)
            close(fd);
        if (missing) {
            static pthread_once_t once = PTHREAD_ONCE_INIT;
            pthread_once(&once, install_fork_hook);
        }
    }
    return missing;
}

int worker__procfd_before_fork(int *rd)
{
    int p[2];
    *rd = -1;
    if (!worker__pidfd_missing())
        return 0;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    *rd = p[0];
    next_exit_wr = p[1];
    return 0;
}

int worker__procfd_after_fork(pid_t pid, int rd)
{
    if (rd < 0)
        return pidfd_open(pid, 0);
    /* Fallback: the child holds the write end now (or fork failed). */
    if (next_exit_wr >= 0)
        close(next_exit_wr);
    next_exit_wr = -1;
    if (pid < 0) {
        close(rd);
        return -1;
    }
    return rd;
}

int worker__procfd_waitid(int fd, pid_t pid, siginfo_t *si, int options)
{
    if (worker__pidfd_missing())
        return waitid(P_PID, (id_t)pid, si, options);
    return waitid(P_PIDFD, (id_t)fd, si, options);
}

int worker__procfd_signal(int fd, pid_t pid, int sig)
{
    if (worker__pidfd_missing())
        return kill(pid, sig);
    return pidfd_send_signal(fd, sig, NULL, 0);
}

/* A run of exit descriptors [first, last] inherited by a fork, closed in
   one close_range(2) (close(2) one by one where the kernel lacks it). */
void worker__procfd_close_range(int first, int last)
{
    if (close_range((unsigned)first, (unsigned)last, 0) == 0)
        return;
    for (int fd = first; fd <= last; fd++)
        close(fd);
}

/* ---- wait statuses ---- */

void worker__describe_status(int status, char *buf, size_t size)
{
    if (status < 0)
        snprintf(buf, size, "reaped elsewhere");
    else if (WIFEXITED(status))
        snprintf(buf, size, "exited with code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status),
                 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
                                                : "?");
    else
        snprintf(buf, size, "wait status %#x", status);
}

int worker__status_from_siginfo(const siginfo_t *si)
{
    switch (si->si_code) {
    case CLD_EXITED:
        return (si->si_status & 0xff) << 8;
    case CLD_KILLED:
        return si->si_status & 0x7f;
    case CLD_DUMPED:
        return (si->si_status & 0x7f) | 0x80;
    default:
        return -1;
    }
}

bool worker__child_exited(struct worker__child *c, int *status)
{
    siginfo_t si;

    if (c->reaped) {
        *status = c->wait_status;
        return true;
    }
    memset(&si, 0, sizeof(si));
    /* WNOWAIT: only look. The zombie keeps pinning its pid and process
       group until close() reaps it (with the group kill). */
    if (worker__procfd_waitid(c->pidfd, c->pid, &si,
                              WEXITED | WNOHANG | WNOWAIT) < 0) {
        if (errno == EINTR)
            return false;
        *status = -1; /* ECHILD: reaped behind our back */
        return true;
    }
    if (si.si_pid == 0)
        return false;
    *status = worker__status_from_siginfo(&si);
    return true;
}
