/* SPDX-License-Identifier: MIT */
/*
 * bench_case_overhead.c — what guarding a case costs, against the two
 * baselines that matter, measured in the same run and interleaved round by
 * round (the machine is shared and noisy, so only ratios of medians taken
 * together mean anything):
 *
 *   plain    N empty cases under cmocka_run_group_tests()
 *   guarded  the same N cases under mpf_run_group_tests()
 *   fork     N times fork, empty body, _exit, waitpid (fork-per-case
 *            isolation, what Check and LTP pay)
 *   core     N times mpf_case_begin() + mpf_case_end(), no cmocka
 *
 * Prints one "sample <label> <round> <us per case>" line per variant and
 * round; bench/report.py turns them into medians, p90 and the ratio
 * guarded_overhead_vs_fork_per_case (paired per round).
 *
 * "shm CASES ROUNDS LEVEL..." measures the guarded empty case with LEVEL
 * foreign entries in /dev/shm (interleaved, rotated): guard_shm_<LEVEL>.
 * "create CREATIONS ROUNDS" measures a ledgered shm_open (its site
 * captured) against libc's own: shm_open_ledgered, shm_open_bare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpfixture.h"

#define ROUNDS 9

static void empty_case(void **state)
{
    (void)state;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static struct CMUnitTest *make_table(size_t n)
{
    struct CMUnitTest *t = calloc(n, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        char *name = malloc(24);
        snprintf(name, 24, "c%zu", i);
        t[i] = (struct CMUnitTest){ name, empty_case, NULL, NULL, NULL };
    }
    return t;
}

/* cmocka prints two lines per case: send them where a CI log would not
   slow them down differently for the two runs. */
static int saved_stderr;

static int quiet_stdout(void)
{
    fflush(stdout);
    fflush(stderr);
    int saved = dup(STDOUT_FILENO);
    saved_stderr = dup(STDERR_FILENO);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
    return saved;
}

static void restore_stdout(int saved)
{
    fflush(stdout);
    fflush(stderr);
    dup2(saved, STDOUT_FILENO);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved);
    close(saved_stderr);
}

static double run_plain(const struct CMUnitTest *t, size_t n)
{
    int saved = quiet_stdout();
    double t0 = now_us();
    _cmocka_run_group_tests("plain", t, n, NULL, NULL);
    double dt = now_us() - t0;
    restore_stdout(saved);
    return dt / (double)n;
}

static double run_guarded(const struct CMUnitTest *t, size_t n)
{
    int saved = quiet_stdout();
    double t0 = now_us();
    int failed = mpf__run_group_tests("guarded", t, n, NULL, NULL);
    double dt = now_us() - t0;
    restore_stdout(saved);
    if (failed) {
        fprintf(stderr, "bench: %d guarded empty cases failed\n", failed);
        exit(1);
    }
    return dt / (double)n;
}

static double run_fork(size_t n)
{
    double t0 = now_us();
    for (size_t i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        waitpid(pid, NULL, 0);
    }
    return (now_us() - t0) / (double)n;
}

static double run_core(size_t n)
{
    mpf_group_options g = MPF_GROUP_OPTIONS_INIT;
    mpf_case_options c = { "core", 1000 };
    mpf_report *r = malloc(sizeof *r);
    if (mpf_group_begin(&g) != 0) {
        fprintf(stderr, "bench: %s\n", mpf_last_error());
        exit(1);
    }
    double t0 = now_us();
    for (size_t i = 0; i < n; i++) {
        mpf_case_begin(&c);
        if (mpf_case_end(r) != 0) {
            fprintf(stderr, "bench: an empty core case failed\n");
            exit(1);
        }
    }
    double dt = now_us() - t0;
    mpf_group_end();
    free(r);
    return dt / (double)n;
}

/* ---- a group's own cost ---- */

/* N times mpf_group_begin() + mpf_group_end() with no case: what a
   per-test group (Check's fork mode, Criterion's workers) pays on top of
   its cases, against N times fork + _exit + waitpid. */
static double run_group(size_t n)
{
    mpf_group_options g = MPF_GROUP_OPTIONS_INIT;
    double t0 = now_us();
    for (size_t i = 0; i < n; i++) {
        if (mpf_group_begin(&g) != 0 || mpf_group_end() != 0) {
            fprintf(stderr, "bench: empty group: %s\n", mpf_last_error());
            exit(1);
        }
    }
    return (now_us() - t0) / (double)n;
}

static int mode_group(int argc, char **argv)
{
    /* group GROUPS ROUNDS */
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    int rounds = argc > 3 ? atoi(argv[3]) : 0;
    if (n == 0 || rounds <= 0) {
        fprintf(stderr, "usage: bench_case_overhead group GROUPS ROUNDS\n");
        return 2;
    }
    run_group(n); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        double group = 0, forked = 0;
        for (int k = 0; k < 2; k++) {
            if ((r + k) % 2)
                forked = run_fork(n);
            else
                group = run_group(n);
        }
        printf("sample group_begin_end %d %.3f\n", r, group);
        printf("sample fork_per_group %d %.3f\n", r, forked);
        fflush(stdout);
    }
    return 0;
}

/* ---- foreign /dev/shm entries ---- */

/* Entries another process would have left: made with raw system calls so
   that this process's own shm ledger (the interposed libc calls) never sees
   them, named with run.sh's tag so its EXIT trap removes them whatever
   happens, and unlinked here on every way out. */
static char foreign_prefix[64];
static unsigned foreign_n;

/* "/dev/shm/<prefix><i>" with stores only: the signal handler uses it. */
static void foreign_name(char *buf, size_t size, unsigned i)
{
    static const char dir[] = "/dev/shm/";
    char digits[12];
    size_t len = 0, n = 0;
    for (const char *s = dir; *s && len + 1 < size; s++)
        buf[len++] = *s;
    for (const char *s = foreign_prefix; *s && len + 1 < size; s++)
        buf[len++] = *s;
    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i && n < sizeof digits);
    while (n && len + 1 < size)
        buf[len++] = digits[--n];
    buf[len] = '\0';
}

static void foreign_set(unsigned want)
{
    char name[128];
    while (foreign_n < want) {
        foreign_name(name, sizeof name, foreign_n);
        long fd = syscall(SYS_openat, AT_FDCWD, name,
                          O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) {
            fprintf(stderr, "bench: create %s: %s\n", name, strerror(errno));
            exit(1);
        }
        syscall(SYS_close, fd);
        foreign_n++;
    }
    while (foreign_n > want) {
        foreign_name(name, sizeof name, --foreign_n);
        syscall(SYS_unlinkat, AT_FDCWD, name, 0);
    }
}

static void foreign_clear(void)
{
    foreign_set(0);
}

static void foreign_signal(int sig)
{
    char name[128];
    while (foreign_n > 0) { /* async-signal-safe: stores and syscalls */
        foreign_name(name, sizeof name, --foreign_n);
        (void)unlink(name);
    }
    (void)signal(sig, SIG_DFL);
    (void)raise(sig);
}

static int mode_shm(int argc, char **argv)
{
    /* shm CASES ROUNDS LEVEL... */
    size_t n = strtoul(argv[2], NULL, 10);
    int rounds = atoi(argv[3]), nl = argc - 4;
    unsigned levels[16];
    const char *tag = getenv("BENCH_TAG");

    if (n == 0 || rounds <= 0 || nl <= 0 || nl > 16) {
        fprintf(stderr,
                "usage: bench_case_overhead shm CASES ROUNDS LEVEL...\n");
        return 2;
    }
    for (int i = 0; i < nl; i++)
        levels[i] = (unsigned)strtoul(argv[4 + i], NULL, 10);
    snprintf(foreign_prefix, sizeof foreign_prefix, "mpfbench-%s-foreign-%d-",
             tag ? tag : "x", (int)getpid());
    (void)atexit(foreign_clear);
    (void)signal(SIGINT, foreign_signal);
    (void)signal(SIGTERM, foreign_signal);
    (void)signal(SIGHUP, foreign_signal);

    struct CMUnitTest *t = make_table(n);
    run_guarded(t, n); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nl; k++) {
            unsigned level = levels[(r + k) % nl];
            foreign_set(level);
            printf("sample guard_shm_%u %d %.3f\n", level, r,
                   run_guarded(t, n));
            fflush(stdout);
        }
    }
    foreign_clear();
    return 0;
}

/* ---- a ledgered creation's cost ---- */

/* N times shm_open(O_CREAT | O_EXCL) + close + shm_unlink of names with
   run.sh's tag (its EXIT trap removes what a killed run leaves), through
   `open_fn`: the interposed shm_open inside a guarded case (ledgered, its
   site captured) or libc's own, found past libmpfixture (bare). */
typedef int (*shm_open_fn)(const char *, int, mode_t);

static double run_creations(size_t n, shm_open_fn open_fn, const char *tag)
{
    char name[96];
    double t0 = now_us();
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "/mpfbench-%s-create-%d-%zu", tag,
                 (int)getpid(), i);
        int fd = open_fn(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) {
            fprintf(stderr, "bench: shm_open %s: %s\n", name, strerror(errno));
            exit(1);
        }
        close(fd);
        shm_unlink(name);
    }
    return (now_us() - t0) / (double)n;
}

static double run_ledgered(size_t n, const char *tag)
{
    mpf_group_options g = MPF_GROUP_OPTIONS_INIT;
    mpf_case_options o = MPF_CASE_OPTIONS_INIT;
    mpf_report r;
    o.name = "creations";
    if (mpf_group_begin(&g) != 0 || mpf_case_begin(&o) != 0) {
        fprintf(stderr, "bench: guarded case: %s\n", mpf_last_error());
        exit(1);
    }
    double us = run_creations(n, shm_open, tag);
    if (mpf_case_end(&r) != 0 || mpf_group_end() != 0) {
        fprintf(stderr, "bench: the creating case failed\n");
        exit(1);
    }
    return us;
}

static int mode_create(int argc, char **argv)
{
    /* create CREATIONS ROUNDS */
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    int rounds = argc > 3 ? atoi(argv[3]) : 0;
    const char *tag = getenv("BENCH_TAG");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    shm_open_fn bare = NULL;
    if (libc)
        *(void **)&bare = dlsym(libc, "shm_open");
    if (n == 0 || rounds <= 0 || !bare) {
        fprintf(stderr,
                "usage: bench_case_overhead create CREATIONS ROUNDS "
                "(libc's shm_open found: %s)\n",
                bare ? "yes" : "no");
        return 2;
    }
    tag = tag ? tag : "x";
    run_ledgered(n, tag); /* warm-up */
    run_creations(n, bare, tag);
    for (int r = 0; r < rounds; r++) {
        double ledgered = 0, plain = 0;
        for (int k = 0; k < 2; k++) {
            if ((r + k) % 2)
                plain = run_creations(n, bare, tag);
            else
                ledgered = run_ledgered(n, tag);
        }
        printf("sample shm_open_ledgered %d %.3f\n", r, ledgered);
        printf("sample shm_open_bare %d %.3f\n", r, plain);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "create"))
        return mode_create(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "shm"))
        return mode_shm(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "group"))
        return mode_group(argc, argv);
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    int rounds = argc > 2 ? atoi(argv[2]) : ROUNDS;
    if (n == 0 || rounds <= 0) {
        fprintf(stderr,
                "usage: %s [cases per round [rounds]] | shm CASES ROUNDS "
                "LEVEL... | group GROUPS ROUNDS\n",
                argv[0]);
        return 2;
    }
    struct CMUnitTest *t = make_table(n);
    run_plain(t, n); /* warm-up */
    run_guarded(t, n);
    for (int r = 0; r < rounds; r++) {
        double plain = 0, guarded = 0, forked = 0, core = 0;
        /* Rotate the order so no variant always runs first. */
        for (int k = 0; k < 4; k++) {
            switch ((r + k) % 4) {
            case 0:
                plain = run_plain(t, n);
                break;
            case 1:
                guarded = run_guarded(t, n);
                break;
            case 2:
                forked = run_fork(n);
                break;
            case 3:
                core = run_core(n);
                break;
            }
        }
        /* us per case; the ratio of the round is paired */
        printf("sample plain_case %d %.3f\n", r, plain);
        printf("sample guarded_case %d %.3f\n", r, guarded);
        printf("sample guard_overhead %d %.3f\n", r, guarded - plain);
        printf("sample fork_per_case %d %.3f\n", r, forked);
        printf("sample core_begin_end %d %.3f\n", r, core);
        fflush(stdout);
    }
    return 0;
}
