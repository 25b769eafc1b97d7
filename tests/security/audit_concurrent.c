/* SPDX-License-Identifier: MIT */
/*
 * audit_concurrent.c — many processes append audit lines at once, none
 * killed (issue 30, item 5: concurrent writers left empty lines).
 *
 *   audit_concurrent WRITERS LINES /ABSOLUTE/FILE
 *
 * WRITERS processes wait at a gate (a pipe whose write end the parent
 * closes once all are started: each read() returns 0 at the same moment)
 * and then append LINES lines each through the fixture's own writer,
 * mpf__audit_append() (audit_file.c, compiled in), lines of about 2 to
 * 16 KiB, so that most span a page boundary: the kernel grows the file
 * page by page within one write, which another writer's fstat() can see.
 * No sleeps. Exits 0 when every writer appended every line (a writer
 * whose line was not recorded exits 3); check_audit_concurrent.py judges
 * the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit_stubs.h"

static struct mpf__shared page;
static mpf_report report;

static void __attribute__((noreturn)) writer(int index, int lines, int gate)
{
    char byte;
    while (read(gate, &byte, 1) < 0 && errno == EINTR)
        ; /* 0 (EOF) once the parent closes the write end */
    close(gate);
    for (int k = 0; k < lines; k++) {
        memset(&report, 0, sizeof report);
        snprintf(report.binary, sizeof report.binary, "audit_concurrent");
        snprintf(report.case_name, sizeof report.case_name, "w%d.%d", index, k);
        report.passed = true;
        report.kinds = MPF_SURVIVOR;
        report.expected = MPF_SURVIVOR;
        report.n_offenders = 4 + (size_t)(index * 7 + k * 3) % 32;
        for (size_t i = 0; i < report.n_offenders; i++) {
            mpf_offender *o = &report.offenders[i];
            o->kind = MPF_SURVIVOR;
            o->pid = (pid_t)(1000 + i);
            memset(o->name, 'n', 200);
            memset(o->detail, 'd', sizeof o->detail - 1);
        }
        mpf__audit_append(&report);
        if (!report.passed)
            _exit(3);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 4 || argv[3][0] != '/') {
        fprintf(stderr, "usage: audit_concurrent WRITERS LINES "
                        "/ABSOLUTE/FILE\n");
        return 2;
    }
    int writers = atoi(argv[1]), lines = atoi(argv[2]);
    if (writers < 1 || writers > 64 || lines < 1)
        return 2;
    mpf__page = &page;
    snprintf(page.audit_path, sizeof page.audit_path, "%s", argv[3]);
    int gate[2];
    if (pipe(gate) != 0) {
        perror("audit_concurrent: pipe");
        return 1;
    }
    pid_t pids[64];
    fflush(NULL);
    for (int i = 0; i < writers; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(gate[1]);
            writer(i, lines, gate[0]);
        }
        if (pids[i] < 0) {
            perror("audit_concurrent: fork");
            return 1;
        }
    }
    close(gate[0]);
    close(gate[1]); /* the gate opens: every writer's read() returns 0 */
    int failed = 0;
    for (int i = 0; i < writers; i++) {
        int status;
        while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
            ;
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    printf("writers %d lines %d failed %d\n", writers, lines, failed);
    return failed ? 1 : 0;
}
