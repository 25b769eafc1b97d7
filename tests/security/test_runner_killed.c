/* SPDX-License-Identifier: MIT */
/*
 * test_runner_killed — a case runner killed from outside loses nothing.
 *
 *   test_runner_killed runner N SUBJECT     SIGKILL of the runner, N times
 *   test_runner_killed binary N SUBJECT     SIGKILL of the test binary
 *
 * Each round runs SUBJECT (runner_killed_subject) with MPF_AUDIT set, waits
 * until its first case says it has made its shm objects and its child (a
 * pipe: no sleep), then SIGKILLs the runner (or the whole test binary, the
 * supervisor) through a pidfd. Then, for "runner": the binary exits 1; both
 * cases have an audit line, the killed one with test "error" and a message
 * naming signal 9; the objects are gone. For both: the runner, the case's
 * child and every other process of the tree are gone (pidfds polled, and
 * what landed on this process, a child subreaper, ends) — checked with
 * a bounded wait on the pidfds, never a sleep.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY_FD 9
#define DEATH_BOUND_MS 20000 /* a failure bound, not a pace */

static int failures;

static void fail(int round, const char *what)
{
    fprintf(stderr, "round %d: %s\n", round, what);
    failures++;
}

static int pidfd_open(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The process of pidfd ends within the bound. */
static bool ends(int pidfd)
{
    struct pollfd p = { pidfd, POLLIN, 0 };
    int rc;
    while ((rc = poll(&p, 1, DEATH_BOUND_MS)) < 0 && errno == EINTR)
        ;
    return rc == 1;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The line of `case_name` in the audit text, copied into out. */
static bool audit_line(const char *text, const char *case_name, char *out,
                       size_t size)
{
    char key[160];
    snprintf(key, sizeof key, "\"case\":\"%s\"", case_name);
    int found = 0;
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (memmem(l, len, key, strlen(key))) {
            snprintf(out, size, "%.*s", (int)len, l);
            found++;
        }
        l = nl ? nl + 1 : NULL;
    }
    return found == 1;
}

static void one_round(int round, bool kill_binary, const char *subject,
                      const char *audit)
{
    unlink(audit);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fail(round, "pipe");
        return;
    }
    pid_t bin = fork();
    if (bin == 0) {
        if (dup2(p[1], READY_FD) < 0)
            _exit(126);
        setenv("MPF_TEST_READY_FD", "9", 1);
        setenv("MPF_AUDIT", audit, 1);
        execl(subject, subject, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[256] = "";
    FILE *r = fdopen(p[0], "r");
    int runner = 0, child = 0;
    char name[2][64];
    if (!r || !fgets(line, sizeof line, r) ||
        sscanf(line, "%d %d %63s %63s", &runner, &child, name[0], name[1]) !=
            4) {
        fail(round, "the case never said it was ready");
        kill(bin, SIGKILL);
        waitpid(bin, NULL, 0);
        if (r)
            fclose(r);
        return;
    }
    fclose(r);
    /* Both are alive and unreaped (blocked in pause()): their pids are
       theirs while the pidfds are opened. */
    int runner_fd = pidfd_open(runner), child_fd = pidfd_open(child);
    int bin_fd = pidfd_open(bin);
    if (runner_fd < 0 || child_fd < 0 || bin_fd < 0) {
        fail(round, "pidfd_open");
        return;
    }
    char path[2][160];
    for (int i = 0; i < 2; i++) {
        snprintf(path[i], sizeof path[i], "/dev/shm/%s", name[i]);
        if (access(path[i], F_OK) != 0)
            fail(round, "an object the case said it made is missing");
    }
    syscall(SYS_pidfd_send_signal, kill_binary ? bin_fd : runner_fd, SIGKILL,
            NULL, 0);
    int status = 0;
    while (waitpid(bin, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ends(runner_fd))
        fail(round, "the runner is still alive");
    if (kill_binary) {
        /* The case's own processes are re-parented to the next subreaper
           up (here, this process; ctest's tree kill or mpf-run above a
           real run): end it, then everything else that landed here must
           end by itself (the watchdog dies with its runner); alarm() is
           the failure bound. */
        syscall(SYS_pidfd_send_signal, child_fd, SIGKILL, NULL, 0);
        alarm(60);
        while (wait(NULL) > 0 || errno == EINTR)
            ;
        alarm(0);
    } else {
        if (!ends(child_fd))
            fail(round, "the case's child is still alive");
        /* The supervisor reaped the whole tree: nothing landed here (a
           child subreaper), alive or dead. */
        pid_t left;
        while ((left = waitpid(-1, NULL, WNOHANG)) > 0) {
            char m[64];
            snprintf(m, sizeof m, "process %d of the tree was left", (int)left);
            fail(round, m);
        }
        if (left == 0)
            fail(round, "a process of the tree is still running");
    }
    close(runner_fd);
    close(child_fd);
    close(bin_fd);
    if (kill_binary) {
        for (int i = 0; i < 2; i++)
            unlink(path[i]);
        return;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail(round, "the binary did not exit 1");
    for (int i = 0; i < 2; i++)
        if (access(path[i], F_OK) == 0) {
            fail(round, "an object of the killed case is left");
            unlink(path[i]);
        }
    const char *text = read_all(audit);
    char l[4096];
    if (!text || !audit_line(text, "case_makes_objects_and_a_child_then_waits",
                             l, sizeof l)) {
        fail(round, "the killed case has no audit line (or two)");
    } else if (!strstr(l, "\"verdict\":\"fail\"") ||
               !strstr(l, "\"test\":\"error\"") ||
               !strstr(l, "runner killed by signal 9") ||
               !strstr(l, "\"shm_leaks\":2") || !strstr(l, "\"survivors\":1")) {
        fprintf(stderr, "%s\n", l);
        fail(round, "the killed case's audit line does not say it all");
    }
    if (!text || !audit_line(text, "case_after_passes", l, sizeof l) ||
        !strstr(l, "\"verdict\":\"pass\""))
        fail(round, "the next case has no passing audit line");
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "runner") && strcmp(argv[1], "binary")))
        return fprintf(stderr, "usage: %s runner|binary N SUBJECT\n", argv[0]),
               2;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return perror("PR_SET_CHILD_SUBREAPER"), 2;
    int rounds = atoi(argv[2]);
    char audit[64];
    snprintf(audit, sizeof audit, "runner_killed_%d.jsonl", (int)getpid());
    for (int i = 1; i <= rounds; i++)
        one_round(i, strcmp(argv[1], "binary") == 0, argv[3], audit);
    unlink(audit);
    printf("%s killed in %d rounds: %d failure(s)\n", argv[1], rounds,
           failures);
    return failures ? 1 : 0;
}
