/* SPDX-License-Identifier: MIT */
/*
 * audit_tear.c — audit lines under a kill loop (issue 18, item 5).
 *
 *   audit_tear WRITERS KILLS FILE
 *
 * WRITERS processes append audit lines to FILE (an absolute path) through
 * the fixture's own writer, mpf__audit_append() (audit_file.c, compiled
 * in), lines of 2 to 16 KiB (so a write spans pages, where a SIGKILL can
 * cut it). Each counts in shared memory the lines it has begun; the parent
 * spins on the counts and SIGKILLs a writer as soon as it has begun its
 * target line (1 to 4, at random), reaps it and starts another, KILLS
 * times in all: the kills land inside appends, at random points. No
 * sleeps. A writer the parent is late for stops after 32 lines.
 * Before the writers start, the parent leaves one torn line itself (half
 * a line, as a writer killed in the middle of its write leaves it), so the
 * file always holds one. Prints "writers W kills K" at the end.
 * check_audit_tear.py judges the file with mpf-audit.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit_stubs.h"

static struct mpf__shared page;
static mpf_report report;

/* Lines a writer appends at most before it waits to be killed: the file
   stays small however late the parent's kill comes. */
#define LINES_PER_WRITER 32

/* Per writer, lines begun so far (the writer counts one up right before
   each append): shared with the parent, which kills when it sees the
   count reach its target. */
static _Atomic unsigned *begun;

static void __attribute__((noreturn)) writer(int index)
{
    /* Below the parent, which spins on the counts. */
    if (nice(19) < 0)
        _exit(5);
    for (unsigned k = 0;; k++) {
        if (k == LINES_PER_WRITER)
            for (;;)
                pause(); /* until the SIGKILL */
        memset(&report, 0, sizeof report);
        snprintf(report.binary, sizeof report.binary, "audit_tear");
        snprintf(report.case_name, sizeof report.case_name, "w%d.%d.%u", index,
                 (int)getpid(), k);
        report.passed = true;
        report.kinds = MPF_SURVIVOR;
        report.expected = MPF_SURVIVOR;
        report.n_offenders = 4 + k % 32;
        for (size_t i = 0; i < report.n_offenders; i++) {
            mpf_offender *o = &report.offenders[i];
            o->kind = MPF_SURVIVOR;
            o->pid = (pid_t)(1000 + i);
            memset(o->name, 'n', 200);
            memset(o->detail, 'd', sizeof o->detail - 1);
        }
        atomic_fetch_add(&begun[index], 1u);
        mpf__audit_append(&report);
        if (!report.passed) /* the writer's own failure: say it, stop */
            _exit(3);
    }
}

static pid_t start_writer(int index)
{
    atomic_store(&begun[index], 0u);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        writer(index);
    return pid;
}

/* Kill a writer and reap it; false if it had ended on its own. */
static bool kill_writer(pid_t pid)
{
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFSIGNALED(status);
}

int main(int argc, char **argv)
{
    if (argc != 4 || argv[3][0] != '/') {
        fprintf(stderr, "usage: audit_tear WRITERS KILLS /ABSOLUTE/FILE\n");
        return 2;
    }
    int writers = atoi(argv[1]), kills = atoi(argv[2]);
    if (writers < 1 || writers > 64 || kills < 0)
        return 2;
    mpf__page = &page;
    snprintf(page.audit_path, sizeof page.audit_path, "%s", argv[3]);
    begun = mmap(NULL, 64 * sizeof *begun, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (begun == MAP_FAILED)
        return 1;

    /* One torn line for certain: the first half of a whole one. */
    static char line[16384];
    memset(&report, 0, sizeof report);
    snprintf(report.binary, sizeof report.binary, "audit_tear");
    snprintf(report.case_name, sizeof report.case_name, "torn-by-hand");
    size_t len = mpf__audit_line(&report, line, sizeof line);
    int fd = open(argv[3], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, len / 2) != (ssize_t)(len / 2)) {
        perror("audit_tear: the torn line");
        return 1;
    }
    close(fd);

    /* Each writer is killed as soon as it has begun its target-th line
       (1 to 4, at random): inside that append, at whatever point the
       signal lands. The parent spins on the counts: no sleeps. */
    pid_t pids[64];
    unsigned target[64];
    unsigned seed = 18;
    for (int i = 0; i < writers; i++) {
        target[i] = 1 + (unsigned)rand_r(&seed) % 4;
        pids[i] = start_writer(i);
    }
    int done = 0, failed = 0;
    while (done < kills) {
        for (int i = 0; i < writers && done < kills; i++) {
            if (atomic_load(&begun[i]) < target[i])
                continue;
            failed += !kill_writer(pids[i]);
            done++;
            target[i] = 1 + (unsigned)rand_r(&seed) % 4;
            pids[i] = start_writer(i);
        }
    }
    for (int i = 0; i < writers; i++)
        failed += !kill_writer(pids[i]);
    printf("writers %d kills %d failed %d\n", writers, done, failed);
    return failed ? 1 : 0;
}
