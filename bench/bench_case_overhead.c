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
 * Prints the medians as comments and one line per ratio:
 *   ratio <name> <value> target <t> <ok|miss>
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
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

static void ratio(const char *name, double value, double target)
{
    printf("ratio %s %.3f target %.2f %s\n", name, value, target,
           value <= target ? "ok" : "miss");
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    if (n == 0) {
        fprintf(stderr, "usage: %s [cases per round]\n", argv[0]);
        return 2;
    }
    struct CMUnitTest *t = make_table(n);
    double plain[ROUNDS], guarded[ROUNDS], forked[ROUNDS], core[ROUNDS];
    double overhead[ROUNDS], per_fork[ROUNDS];
    run_plain(t, n); /* warm-up */
    run_guarded(t, n);
    for (int r = 0; r < ROUNDS; r++) {
        /* Rotate the order so no variant always runs first. */
        for (int k = 0; k < 4; k++) {
            switch ((r + k) % 4) {
            case 0: plain[r] = run_plain(t, n); break;
            case 1: guarded[r] = run_guarded(t, n); break;
            case 2: forked[r] = run_fork(n); break;
            case 3: core[r] = run_core(n); break;
            }
        }
        overhead[r] = guarded[r] - plain[r];
        per_fork[r] = overhead[r] / forked[r];
    }
    printf("# %zu cases x %d rounds, medians in us per case\n", n, ROUNDS);
    printf("# plain cmocka %.2f  guarded %.2f  overhead %.2f  core "
           "begin+end %.2f  fork-per-case %.2f\n",
           median(plain, ROUNDS), median(guarded, ROUNDS),
           median(overhead, ROUNDS), median(core, ROUNDS),
           median(forked, ROUNDS));
    ratio("guarded_overhead_vs_fork_per_case", median(per_fork, ROUNDS), 0.15);
    return 0;
}
