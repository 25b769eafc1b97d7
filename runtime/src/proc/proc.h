/* SPDX-License-Identifier: MIT */
/*
 * proc.h — a process of the tree: what it knows of itself and how it
 * leaves (self.c), its children's exit descriptors, waits, signals and
 * wait statuses (procfd.c). The children a thread forked, as /proc lists
 * them: proc/children.h.
 */
#ifndef WORKER_PROC_H
#define WORKER_PROC_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"
#include "wire/mailbox.h"

struct worker__child;

/* ---- per-process context of a child (inherited copies are reset) ---- */

struct worker__self {
    char role[WORKER__NAME_MAX]; /* "root", "next.1", "next.1/chip.0" */
    bool is_child;
    pid_t ppid_before_fork; /* pid of the parent, captured before fork */
    int uplink_fd;          /* eventfd of the parent: ring after publishing */
    struct worker__wake *uplink_wake; /* the parent's waiters (internal.h) */
    worker__mailbox *mailbox;         /* own mailbox, NULL in a root */
    /* Set from the SIGTERM / SIGHUP handler (async-signal-safe). */
    volatile sig_atomic_t cancel;
    volatile sig_atomic_t parent_gone;
    /* Incremented and futex-woken by the handler, so a wait that raced the
       signal sees a changed word. */
    _Atomic uint32_t wake;
    int doorbell_fd; /* own doorbell (a nested worker's), -1 */
};

extern struct worker__self worker__self;

/* self.c: the parent told this child to stop (the sticky word, a
   SHUTDOWN state) or is gone (its death signal arrived, or getppid() no
   longer names it: then parent_gone is set too). */
bool worker__shutdown_requested(const worker__mailbox *mb);
/* The same without the getppid() system call: the words and the flags
   only. For checks made once per task; a child asks
   worker__shutdown_requested() before it parks. */
bool worker__shutdown_seen(const worker__mailbox *mb);

_Noreturn void worker__child_exit(int code);
/* Coverage builds: write the gcov counters of the whole process now (and
   start counting afresh), before a path that ends in a signal or SIGKILL
   rather than _exit (a crash, a hang that only SIGKILL ends). Nothing in
   other builds. */
#ifdef MPF_COVERAGE_BUILD
void worker__coverage_flush(void);
#else
static inline void worker__coverage_flush(void)
{
}
#endif

/* procfd.c: a descriptor per child that turns readable (POLLIN or
   POLLHUP) when it exits — its pidfd, or an exit pipe where pidfd_open is
   missing — and waits and signals through it. */
bool worker__pidfd_missing(void);
/* Before fork: *rd is the fallback's read end (-1 with pidfds). */
int worker__procfd_before_fork(int *rd);
/* After fork in the parent (pid < 0: fork failed, releases it): the
   child's descriptor, or -1 with errno. */
int worker__procfd_after_fork(pid_t pid, int rd);
int worker__procfd_waitid(int fd, pid_t pid, siginfo_t *si, int options);
int worker__procfd_signal(int fd, pid_t pid, int sig);
/* Close the descriptors first..last (a run of a parent's exit
   descriptors, in a child of its fork). */
void worker__procfd_close_range(int first, int last);
/* A waitid() siginfo as a wait status (-1: none). */
int worker__status_from_siginfo(const siginfo_t *si);

/* procfd.c: wait statuses and liveness */
/* "exited with code N", "killed by signal N (NAME)". */
void worker__describe_status(int status, char *buf, size_t size);
/* Liveness: has child c exited? Peeks (WNOWAIT, never reaps) and fills
   *status. */
bool worker__child_exited(struct worker__child *c, int *status);

#endif /* WORKER_PROC_H */
