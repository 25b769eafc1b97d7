/* SPDX-License-Identifier: MIT */
/*
 * test_runner_killed — a case runner killed from outside loses nothing.
 *
 *   test_runner_killed runner N SUBJECT     SIGKILL of the runner, N times
 *   test_runner_killed binary N SUBJECT     SIGKILL of the test binary
 *   test_runner_killed reclaim SUBJECT MPF_RUN   mpf-run --reclaim after
 *                                           SIGKILL of the whole group
 *   test_runner_killed mpf-run SUBJECT MPF_RUN   SIGTERM, then SIGKILL, of
 *                                           mpf-run running SUBJECT
 *   test_runner_killed plain-tree SUBJECT MPF_RUN  SIGKILL of mpf-run, then
 *                                           of its guard, running a plain
 *                                           program's tree (SUBJECT)
 *   test_runner_killed window SUBJECT LIBMPFIXTURE SHIM
 *                                           the runner killed inside the
 *                                           create-then-record window
 *                                           (SHIM: die_after_create.c)
 *
 * Each round runs SUBJECT (runner_killed_subject) with MPF_AUDIT set, waits
 * until its first case says it has made its shm objects and its child (a
 * pipe: no sleep), then SIGKILLs the runner (or the whole test binary, the
 * supervisor) through a pidfd. Then, for "runner": the binary exits 1; both
 * cases have an audit line, the killed one with test "error" and a message
 * naming signal 9; for "binary": the open case has its line (written by
 * the runner, "the test binary ... died") and the runner's page is gone.
 * For both: the objects are gone; the runner, the case's child and every
 * other process of the tree are gone (pidfds polled, and what landed on
 * this process, a child subreaper, ends by itself) — checked with a
 * bounded wait on the pidfds, never a sleep.
 *
 * With MPF_TEST_KEEP_MANY=N (and MPF_KEEP_SHM=mpf-killed-kept-*), every
 * mode also checks that the object the keep list declares, made before N
 * others (beyond the named slots: keep_many.h), outlives the kill and the
 * removal that follows it, and that the N others are gone.
 */
#include <dirent.h>
#include <dlfcn.h>
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
/* MPF_TEST_KEEP_MANY: the objects each case makes beyond its two. */
static int many;

static void fail(int round, const char *what)
{
    fprintf(stderr, "round %d: %s\n", round, what);
    failures++;
}

/* The subject `maker` made its kept object and `many` others
   (keep_many.h): the kept one is left, the others are gone. Removes what
   is there. */
static void check_kept(int round, pid_t maker)
{
    if (!many)
        return;
    char path[96];
    snprintf(path, sizeof path, "/dev/shm/mpf-killed-kept-%d", (int)maker);
    if (unlink(path) != 0)
        fail(round, "the kept object was removed");
    int left = 0;
    for (int i = 0; i < many; i++) {
        snprintf(path, sizeof path, "/dev/shm/mpf-killed-%d-m%d", (int)maker,
                 i);
        left += unlink(path) == 0;
    }
    if (left) {
        char m[96];
        snprintf(m, sizeof m,
                 "%d of the %d objects beyond the named slots "
                 "are left",
                 left, many);
        fail(round, m);
    }
}

/* `"shm_leaks":N` of a case that made `made` objects besides the kept one
   and the others of MPF_TEST_KEEP_MANY. */
static const char *leaks_field(int made)
{
    static char field[48];
    snprintf(field, sizeof field, "\"shm_leaks\":%d", made + many);
    return field;
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

/* A subject started in a process group of its own, up to its first
   case's readiness line; false on failure. */
struct started {
    pid_t bin;
    int runner, child;
    char name[2][64];
};

static bool start_subject_under(const char *mpf_run, const char *subject,
                                const char *audit, struct started *s)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    s->bin = fork();
    if (s->bin < 0)
        return false;
    if (s->bin == 0) {
        setpgid(0, 0);
        if (dup2(p[1], READY_FD) < 0)
            _exit(126);
        setenv("MPF_TEST_READY_FD", "9", 1);
        setenv("MPF_AUDIT", audit, 1);
        if (mpf_run)
            execl(mpf_run, mpf_run, "--", subject, (char *)NULL);
        else
            execl(subject, subject, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[256] = "";
    FILE *r = fdopen(p[0], "r");
    bool ok = r && fgets(line, sizeof line, r) &&
              sscanf(line, "%d %d %63s %63s", &s->runner, &s->child, s->name[0],
                     s->name[1]) == 4;
    if (r)
        fclose(r);
    return ok;
}

static bool start_subject(const char *subject, const char *audit,
                          struct started *s)
{
    return start_subject_under(NULL, subject, audit, s);
}

/* The test binary was killed: its runner wrote the open case's line (the
   next case never ran) and removed the page it ran on. */
static void check_binary_killed_audit(int round, const char *audit, pid_t bin)
{
    const char *text = read_all(audit);
    char l[4096], said[96];
    snprintf(said, sizeof said, "the test binary (supervisor pid %d) died",
             (int)bin);
    if (!text || !audit_line(text, "case_makes_objects_and_a_child_then_waits",
                             l, sizeof l)) {
        fail(round, "the killed case has no audit line (or two)");
    } else if (!strstr(l, "\"verdict\":\"fail\"") ||
               !strstr(l, "\"test\":\"error\"") || !strstr(l, said) ||
               !strstr(l, leaks_field(2)) || !strstr(l, "\"survivors\":1")) {
        fprintf(stderr, "%s\n", l);
        fail(round, "the killed case's audit line does not say it all");
    }
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, ".mpf-page-%d-", (int)bin);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, (size_t)n) == 0)
            fail(round, "the runner's page is left in /dev/shm");
    if (d)
        closedir(d);
}

static void one_round(int round, bool kill_binary, const char *subject,
                      const char *audit)
{
    unlink(audit);
    struct started st = { 0 };
    if (!start_subject(subject, audit, &st)) {
        fail(round, "the case never said it was ready");
        if (st.bin > 0) {
            kill(st.bin, SIGKILL);
            waitpid(st.bin, NULL, 0);
        }
        return;
    }
    pid_t bin = st.bin;
    int runner = st.runner, child = st.child;
    char(*name)[64] = st.name;
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
        /* The runner ended what it started before it went: the case's
           child is not left running above the dead binary. What landed
           here (a child subreaper) must end by itself; alarm() is the
           failure bound. */
        if (!ends(child_fd))
            fail(round, "the case's child outlived the test binary");
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
    if (!kill_binary && (!WIFEXITED(status) || WEXITSTATUS(status) != 1))
        fail(round, "the binary did not exit 1");
    for (int i = 0; i < 2; i++)
        if (access(path[i], F_OK) == 0) {
            fail(round, "an object of the killed case is left");
            unlink(path[i]);
        }
    check_kept(round, runner);
    if (kill_binary) {
        check_binary_killed_audit(round, audit, bin);
        return;
    }
    const char *text = read_all(audit);
    char l[4096];
    if (!text || !audit_line(text, "case_makes_objects_and_a_child_then_waits",
                             l, sizeof l)) {
        fail(round, "the killed case has no audit line (or two)");
    } else if (!strstr(l, "\"verdict\":\"fail\"") ||
               !strstr(l, "\"test\":\"error\"") ||
               !strstr(l, "runner killed by signal 9") ||
               !strstr(l, leaks_field(2)) || !strstr(l, "\"survivors\":1")) {
        fprintf(stderr, "%s\n", l);
        fail(round, "the killed case's audit line does not say it all");
    }
    if (!text || !audit_line(text, "case_after_passes", l, sizeof l) ||
        !strstr(l, "\"verdict\":\"pass\""))
        fail(round, "the next case has no passing audit line");
}

static bool shm_exists(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    return access(path, F_OK) == 0;
}

static void run_reclaim(const char *mpf_run)
{
    pid_t rp = fork();
    if (rp == 0) {
        execl(mpf_run, mpf_run, "--reclaim", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(rp, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail(0, "mpf-run --reclaim failed");
}

/*
 * A run killed beyond any help (SIGKILL of its whole process group, as
 * ctest's TIMEOUT does): its objects stay until `mpf-run --reclaim`, which
 * removes them and writes the case's audit line, and removes nothing of a
 * live run nor an object that only looks like the dead run's.
 */
/*
 * A runner that outlives its supervisor (its case blocks the parent-death
 * signal, so it does not end the case itself): its page is not a dead
 * run's while it lives, and --reclaim leaves it (it would race the
 * runner's own cleanup otherwise); once the runner is dead, --reclaim
 * takes it.
 */
static void orphan_check(const char *subject, const char *mpf_run,
                         const char *cwd)
{
    char audit[320];
    snprintf(audit, sizeof audit, "%s/reclaim_orphan_%d.jsonl", cwd,
             (int)getpid());
    unlink(audit);
    struct started orphan;
    setenv("MPF_TEST_BLOCK_ORPHAN_SIGNAL", "1", 1);
    bool started = start_subject(subject, audit, &orphan);
    unsetenv("MPF_TEST_BLOCK_ORPHAN_SIGNAL");
    if (!started) {
        fail(0, "the orphan subject never said it was ready");
        return;
    }
    int runner_fd = pidfd_open(orphan.runner);
    int child_fd = pidfd_open(orphan.child);
    kill(orphan.bin, SIGKILL); /* the supervisor only */
    while (waitpid(orphan.bin, NULL, 0) < 0 && errno == EINTR)
        ;
    run_reclaim(mpf_run);
    const char *text = read_all(audit);
    char l[4096];
    if (!shm_exists(orphan.name[0]) || !shm_exists(orphan.name[1]) ||
        (text && audit_line(text, "case_makes_objects_and_a_child_then_waits",
                            l, sizeof l)))
        fail(0, "--reclaim took the page of a runner that still lives");
    syscall(SYS_pidfd_send_signal, runner_fd, SIGKILL, NULL, 0);
    if (!ends(runner_fd))
        fail(0, "the orphaned runner outlived its SIGKILL");
    syscall(SYS_pidfd_send_signal, child_fd, SIGKILL, NULL, 0);
    if (!ends(child_fd))
        fail(0, "the orphaned runner's child outlived its SIGKILL");
    run_reclaim(mpf_run);
    text = read_all(audit);
    if (shm_exists(orphan.name[0]) || shm_exists(orphan.name[1]) || !text ||
        !audit_line(text, "case_makes_objects_and_a_child_then_waits", l,
                    sizeof l) ||
        !strstr(l, "--reclaim"))
        fail(0, "--reclaim left the page of a dead orphaned runner");
    check_kept(0, orphan.runner);
    close(runner_fd);
    close(child_fd);
    unlink(audit);
}

static int reclaim_check(const char *subject, const char *mpf_run)
{
    char audit_dead[320], audit_live[320], similar[96];
    /* Absolute: --reclaim appends from its own directory. */
    char cwd[256];
    if (!getcwd(cwd, sizeof cwd))
        return perror("getcwd"), 2;
    snprintf(audit_dead, sizeof audit_dead, "%s/reclaim_dead_%d.jsonl", cwd,
             (int)getpid());
    snprintf(audit_live, sizeof audit_live, "%s/reclaim_live_%d.jsonl", cwd,
             (int)getpid());
    unlink(audit_dead);
    struct started dead, live;
    if (!start_subject(subject, audit_dead, &dead) ||
        !start_subject(subject, audit_live, &live)) {
        fail(0, "a subject never said it was ready");
        return 1;
    }
    /* An object named like the dead run's that no run made. */
    snprintf(similar, sizeof similar, "/dev/shm/%s-similar", dead.name[0]);
    int fd = open(similar, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    /* Opened while both live (unreaped): --reclaim leaves the page of a
       runner still alive, so the runner's end is awaited, not assumed. */
    int child_fd = pidfd_open(dead.child), runner_fd = pidfd_open(dead.runner);
    kill(-dead.bin, SIGKILL); /* the whole group: nobody left to clean */
    while (waitpid(dead.bin, NULL, 0) < 0 && errno == EINTR)
        ;
    /* What landed here ends: the runner, its watchdog, the case's child. */
    if (child_fd < 0 || !ends(child_fd))
        fail(0, "the dead run's child is still alive");
    if (runner_fd < 0 || !ends(runner_fd))
        fail(0, "the dead run's runner is still alive");
    if (runner_fd >= 0)
        close(runner_fd);
    if (child_fd >= 0)
        close(child_fd);
    if (!shm_exists(dead.name[0]) || !shm_exists(dead.name[1]))
        fail(0, "the dead run's objects are gone before the reclaim: "
                "the test proves nothing");
    run_reclaim(mpf_run);
    int status = 0;
    for (int i = 0; i < 2; i++) {
        if (shm_exists(dead.name[i]))
            fail(0, "an object of the dead run is left after the reclaim");
        if (!shm_exists(live.name[i]))
            fail(0, "the reclaim removed an object of a live run");
    }
    check_kept(0, dead.runner);
    if (access(similar, F_OK) != 0)
        fail(0, "the reclaim removed an object that only looks like one");
    unlink(similar);
    const char *text = read_all(audit_dead);
    char l[4096];
    if (!text ||
        !audit_line(text, "case_makes_objects_and_a_child_then_waits", l,
                    sizeof l) ||
        !strstr(l, "\"test\":\"error\"") || !strstr(l, "--reclaim") ||
        !strstr(l, leaks_field(2)))
        fail(0, "the dead run's case has no audit line from the reclaim");
    orphan_check(subject, mpf_run, cwd);
    /* The live run ends as any killed runner does. */
    int live_fd = pidfd_open(live.runner);
    syscall(SYS_pidfd_send_signal, live_fd, SIGKILL, NULL, 0);
    while (waitpid(live.bin, &status, 0) < 0 && errno == EINTR)
        ;
    for (int i = 0; i < 2; i++)
        if (shm_exists(live.name[i]))
            fail(0, "the live run's objects are left after its end");
    check_kept(0, live.runner);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    unlink(audit_dead);
    unlink(audit_live);
    printf("reclaim: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    int ppid = 0;
    return rp && sscanf(rp, ") %*c %d", &ppid) == 1 ? ppid : 0;
}

/*
 * mpf-run's own end, with a guarded test binary as CMD. SIGTERM: forwarded
 * to CMD, and the run still ends with its cleanup: nothing left running,
 * no object left. SIGKILL: CMD (the supervisor) dies with mpf-run; its
 * runner ends the case's child, removes the case's objects and goes, the
 * watchdog with it; what is left lands on the next subreaper up (here,
 * this process: ended here) and --reclaim finds nothing more to do.
 */
static int mpf_run_check(const char *subject, const char *mpf_run)
{
    for (int round = 1; round <= 2; round++) {
        bool term = round == 1;
        struct started st;
        char audit[64];
        snprintf(audit, sizeof audit, "mpf_run_killed_%d.jsonl", (int)getpid());
        if (!start_subject_under(mpf_run, subject, audit, &st)) {
            fail(round, "the case never said it was ready");
            return 1;
        }
        pid_t supervisor = parent_of(st.runner);
        int bin_fd = pidfd_open(st.bin), runner_fd = pidfd_open(st.runner);
        int child_fd = pidfd_open(st.child);
        int sup_fd = pidfd_open(supervisor);
        if (bin_fd < 0 || runner_fd < 0 || child_fd < 0 || sup_fd < 0) {
            fail(round, "pidfd_open");
            return 1;
        }
        syscall(SYS_pidfd_send_signal, bin_fd, term ? SIGTERM : SIGKILL, NULL,
                0);
        int status = 0;
        while (waitpid(st.bin, &status, 0) < 0 && errno == EINTR)
            ;
        if (!ends(sup_fd))
            fail(round, "the test binary outlived mpf-run");
        if (!ends(runner_fd))
            fail(round, "the runner outlived mpf-run");
        if (term) {
            /* The command's own status (killed by SIGTERM: its runner
               ended the case's child and objects within the grace), or
               the audit's failure (mpf-run ended what was left after the
               grace, on a machine busy enough): never a success. */
            if (!WIFEXITED(status) || (WEXITSTATUS(status) != 128 + SIGTERM &&
                                       WEXITSTATUS(status) != 119))
                fail(round, "mpf-run did not end its run as a failure");
            if (!ends(child_fd))
                fail(round, "the case's child outlived mpf-run");
            if (waitpid(-1, NULL, WNOHANG) == 0)
                fail(round, "a process of the run is still running");
        } else {
            if (!ends(child_fd))
                fail(round, "the case's child outlived mpf-run");
            alarm(60);
            while (wait(NULL) > 0 || errno == EINTR)
                ;
            alarm(0);
        }
        run_reclaim(mpf_run); /* the supervisor's page, if it died */
        for (int i = 0; i < 2; i++)
            if (shm_exists(st.name[i]))
                fail(round, "an object of the case is left");
        check_kept(round, st.runner);
        close(bin_fd);
        close(runner_fd);
        close(child_fd);
        close(sup_fd);
        unlink(audit);
    }
    printf("mpf-run: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}

/* What each process of the plain tree is, for a message. */
static const char *const tree_roles[] = { "mpf-run's guard", "the command",
                                          "the command's child",
                                          "the command's daemon" };

/*
 * mpf-run killed with a plain program's tree under it (plain_tree_subject:
 * no header of ours, a shm object, a child, a daemon re-parented to the
 * guard). Round 1 SIGKILLs mpf-run, the pid its caller holds: its guard
 * ends the whole tree at once, removes the object and writes the run's
 * audit line (test "error", "mpf-run was killed"). Round 2 SIGKILLs the
 * guard: mpf-run ends what the run left, removes the object from the
 * ledger of the page its guard handed it, writes the case's audit line
 * and exits 125. Either way nothing of the tree is left running.
 */
static int plain_tree_check(const char *subject, const char *mpf_run)
{
    char cwd[256];
    if (!getcwd(cwd, sizeof cwd))
        return perror("getcwd"), 2;
    for (int round = 1; round <= 2; round++) {
        bool kill_guard = round == 2;
        char audit[320];
        snprintf(audit, sizeof audit, "%s/plain_tree_%d.jsonl", cwd,
                 (int)getpid());
        unlink(audit);
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return perror("pipe2"), 2;
        pid_t bin = fork();
        if (bin < 0)
            return perror("fork"), 2;
        if (bin == 0) {
            setpgid(0, 0);
            if (dup2(p[1], READY_FD) < 0)
                _exit(126);
            execl(mpf_run, mpf_run, "--audit", audit, "--", subject,
                  (char *)NULL);
            _exit(127);
        }
        close(p[1]);
        char line[256] = "", name[64] = "";
        pid_t tree[4] = { 0 }; /* guard, command, child, daemon */
        FILE *r = fdopen(p[0], "r");
        if (!r || !fgets(line, sizeof line, r) ||
            sscanf(line, "%d %d %d %63s", &tree[1], &tree[2], &tree[3], name) !=
                4) {
            fail(round, "the plain tree never said it was ready");
            kill(-bin, SIGKILL);
            return 1;
        }
        fclose(r);
        tree[0] = parent_of(tree[1]);
        int fds[4], bin_fd = pidfd_open(bin);
        for (int i = 0; i < 4; i++)
            fds[i] = pidfd_open(tree[i]);
        if (bin_fd < 0 || fds[0] < 0 || fds[1] < 0 || fds[2] < 0 ||
            fds[3] < 0) {
            fail(round, "pidfd_open");
            kill(-bin, SIGKILL);
            return 1;
        }
        syscall(SYS_pidfd_send_signal, kill_guard ? fds[0] : bin_fd, SIGKILL,
                NULL, 0);
        int status = 0;
        while (waitpid(bin, &status, 0) < 0 && errno == EINTR)
            ;
        for (int i = 0; i < 4; i++) {
            if (!ends(fds[i])) {
                char m[128];
                snprintf(m, sizeof m, "%s (pid %d) outlived the kill",
                         tree_roles[i], (int)tree[i]);
                fail(round, m);
                syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0);
            }
            close(fds[i]);
        }
        close(bin_fd);
        alarm(60); /* what landed here (a child subreaper) has ended */
        while (wait(NULL) > 0 || errno == EINTR)
            ;
        alarm(0);
        if (kill_guard && (!WIFEXITED(status) || WEXITSTATUS(status) != 125))
            fail(round, "mpf-run did not exit 125 when its guard was killed");
        check_kept(round, tree[1]);
        if (shm_exists(name)) {
            fail(round, "the command's object is left");
            char path[96];
            snprintf(path, sizeof path, "/dev/shm/%s", name);
            unlink(path);
        }
        const char *text = read_all(audit);
        char l[4096];
        char said[96];
        snprintf(said, sizeof said,
                 kill_guard ? "mpf-run's guard (pid %d) was killed by signal 9"
                            : "mpf-run was killed",
                 (int)tree[0]);
        if (!text || !audit_line(text, "plain_tree_subject", l, sizeof l) ||
            !strstr(l, "\"verdict\":\"fail\"") ||
            !strstr(l, "\"test\":\"error\"") || !strstr(l, said) ||
            !strstr(l, leaks_field(1))) {
            fprintf(stderr, "%s\n", text ? text : "(no audit file)");
            fail(round, "the run's audit line does not say it was killed");
        }
        unlink(audit);
    }
    printf("plain tree: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}

/* The entry named "<prefix><digits>" in text, into out; false if none. */
static bool name_in(const char *text, const char *prefix, char *out,
                    size_t size)
{
    const char *at = text ? strstr(text, prefix) : NULL;
    if (!at)
        return false;
    size_t n = strlen(prefix);
    while (at[n] >= '0' && at[n] <= '9')
        n++;
    snprintf(out, size, "%.*s", (int)n, at);
    return true;
}

/*
 * The runner dies inside the create-then-record window: the shim kills it
 * after the kernel made "mpf-window-<pid>" and before the ledger recorded
 * it; the case made "mpf-raw-<pid>" by a raw system call before. Neither
 * has a record, so nothing proves whose they are: the supervisor must
 * name both in the killed case's audit line and on stderr (left in place),
 * and still remove what the ledger holds.
 */
/* A sanitizer runtime this program runs with (an ASan build): it must
   come first in a preload list, before libmpfixture and the shim. "" if
   none. */
static const char *sanitizer_runtime(void)
{
    Dl_info info;
    void *init = dlsym(RTLD_DEFAULT, "__asan_init");
    return init && dladdr(init, &info) && info.dli_fname &&
                   strstr(info.dli_fname, ".so")
               ? info.dli_fname
               : "";
}

static int window_check(const char *subject, const char *lib, const char *shim)
{
    char audit[64], preload[1024];
    snprintf(audit, sizeof audit, "window_%d.jsonl", (int)getpid());
    const char *runtime = sanitizer_runtime();
    snprintf(preload, sizeof preload, "%s%s%s %s", runtime, *runtime ? " " : "",
             lib, shim);
    unlink(audit);
    pid_t bin = fork();
    if (bin < 0)
        return perror("fork"), 2;
    if (bin == 0) {
        setenv("LD_PRELOAD", preload, 1);
        setenv("MPF_TEST_DIE_AFTER_CREATING", "mpf-window-", 1);
        setenv("MPF_TEST_WINDOW", "1", 1);
        setenv("MPF_TEST_READY_FD", "9", 1);
        setenv("MPF_AUDIT", audit, 1);
        execl(subject, subject, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(bin, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail(0, "the binary did not exit 1");
    const char *text = read_all(audit);
    char l[4096], window[64], raw[64];
    if (!text || !audit_line(text, "case_makes_objects_and_a_child_then_waits",
                             l, sizeof l)) {
        fail(0, "the killed case has no audit line (or two)");
    } else {
        if (!strstr(l, "runner killed by signal 9") ||
            !strstr(l, "left in place, born in /dev/shm during the case and "
                       "explained by no record of it: "))
            fail(0, "the killed case's line names nothing it left");
        if (!name_in(l, "mpf-window-", window, sizeof window))
            fail(0, "the object made inside the window is not named");
        else if (!shm_exists(window))
            fail(0, "the named object made inside the window is gone");
        if (!name_in(l, "mpf-raw-", raw, sizeof raw))
            fail(0, "the object made by a raw system call is not named");
        else if (!shm_exists(raw))
            fail(0, "the named object made by a raw system call is gone");
    }
    if (failures && text)
        fprintf(stderr, "%s\n", text);
    const char *names[] = { window, raw };
    for (int i = 0; text && i < 2; i++) {
        char path[96];
        snprintf(path, sizeof path, "/dev/shm/%s", names[i]);
        unlink(path);
    }
    unlink(audit);
    printf("window: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return perror("PR_SET_CHILD_SUBREAPER"), 2;
    const char *v = getenv("MPF_TEST_KEEP_MANY");
    many = v ? atoi(v) : 0;
    if (argc == 4 && strcmp(argv[1], "reclaim") == 0)
        return reclaim_check(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "mpf-run") == 0)
        return mpf_run_check(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "plain-tree") == 0)
        return plain_tree_check(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "window") == 0)
        return window_check(argv[2], argv[3], argv[4]);
    if (argc != 4 ||
        (strcmp(argv[1], "runner") != 0 && strcmp(argv[1], "binary") != 0))
        return fprintf(stderr,
                       "usage: %s runner|binary N SUBJECT\n"
                       "       %s reclaim|mpf-run|plain-tree SUBJECT MPF_RUN\n",
                       argv[0], argv[0]),
               2;
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
