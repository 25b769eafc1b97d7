/* SPDX-License-Identifier: MIT */
/*
 * test_seed_load.c — the seed's own test under the conditions that exposed
 * it: every core busy and the runtime's fault points jittered.
 *
 * simpler's test_second_child_failure_reaps_first failed one CI job in
 * three on loaded runners and passed 20/20 on idle machines (seed #1948).
 * This harness runs its C port (the body of test_startup_readiness.c's
 * second_child_failure_reaps_first, plus an explicit "nothing left" check)
 * MPF_REPEAT times while one CPU hog per online core spins, with
 * MPF_JITTER on, so every fault point of every process of the tree is also a
 * random yield or sleep (mpfixture_fakechips' hook; MPF_SEED replays it).
 *
 * The hogs are plain busy loops forked by main() before the fixture's group
 * and stopped by it after the last round — SIGKILL through their pidfds,
 * then a reap by pid (an unreaped child's pid cannot be reused) — never by
 * name. They die with the test binary too (PR_SET_PDEATHSIG). They predate
 * every case, so the guard counts them in each case's baseline. main()
 * checks the premise at the end by what the machine did: the cores must
 * have been saturated (at most 5% idle over the run, from /proc/stat), or
 * the run did not test anything under load and fails. The hogs' own share
 * is reported, not judged: on a machine busier still (other jobs beside
 * this one) it shrinks while the load only grows.
 *
 * ctest: label stress with MPF_REPEAT=200 (in ci/test.sh), label soak with
 * 2,000; both RUN_SERIAL, so that the hogs neither perturb nor are diluted
 * by the other tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <mpfixture/mpfixture.h>
#include <mpfixture/fakechips.h>
#include "stress_helpers.h"

#define MAX_HOGS 256

struct hog {
    pid_t pid;
    int pidfd;
};

static struct hog hogs[MAX_HOGS];
static unsigned n_hogs;
static double hogs_started_s;

/* Idle and total jiffies of all CPUs (the "cpu" line of /proc/stat). */
static int cpu_jiffies(unsigned long long *idle, unsigned long long *total)
{
    unsigned long long v[8] = { 0 };
    char buf[512];
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return -EIO;
    *idle = v[3] + v[4]; /* idle + iowait */
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    return 0;
}

static _Noreturn void hog_main(pid_t parent)
{
    volatile uint64_t spin = 0;

    /* Dies with the test binary, even if it is SIGKILLed by a watchdog;
       the re-check covers a parent that died before the prctl. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    prctl(PR_SET_NAME, "stress-hog");
    for (;;)
        spin++;
}

/* One busy loop per online core. Returns 0 or a negative errno. */
static int hogs_start(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t self = getpid();

    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > MAX_HOGS)
        ncpu = MAX_HOGS;
    fflush(NULL);
    for (long i = 0; i < ncpu; i++) {
        pid_t pid = fork();

        if (pid < 0)
            return -errno;
        if (pid == 0)
            hog_main(self);
        hogs[n_hogs].pid = pid;
        hogs[n_hogs].pidfd = pidfd_open(pid, 0);
        /* No pidfds (valgrind): the pid of our unreaped child serves. */
        if (hogs[n_hogs].pidfd < 0 && errno != ENOSYS) {
            int err = errno;
            /* Our unreaped child: its pid is still ours to signal. */
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -err;
        }
        n_hogs++;
    }
    hogs_started_s = rt_now_s();
    return 0;
}

/* Stop every hog by its pidfd and reap it; returns the CPU seconds the hogs
   got and sets *wall_s to how long they ran. -1 if one of them had died
   on its own (then the run was not under full load). */
static double hogs_stop(double *wall_s)
{
    double cpu_s = 0;
    bool died_early = false;

    *wall_s = rt_now_s() - hogs_started_s;
    for (unsigned i = 0; i < n_hogs; i++) {
        struct rusage ru;
        int status = 0;

        if (hogs[i].pidfd >= 0)
            pidfd_send_signal(hogs[i].pidfd, SIGKILL, NULL, 0);
        else
            kill(hogs[i].pid, SIGKILL); /* unreaped: still ours */
        while (wait4(hogs[i].pid, &status, 0, &ru) < 0 && errno == EINTR)
            ;
        if (hogs[i].pidfd >= 0)
            close(hogs[i].pidfd);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            died_early = true;
        cpu_s += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    }
    n_hogs = 0;
    return died_early ? -1 : cpu_s;
}

/* The body of test_startup_readiness.c's second_child_failure_reaps_first
   (simpler's test_second_child_failure_reaps_first), plus the tree's own
   "nothing left" checks. */
static void second_child_failure_reaps_first(void **state)
{
    assert_no_shm_left(rt_seed_second_child_failure());
}

static bool listing(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--list") == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        mpfw_unit_test(second_child_failure_reaps_first, 5000),
    };
    const char *repeat = getenv("MPF_REPEAT");
    const char *jitter = getenv("MPF_JITTER");
    double t0, wall_s, cpu_s;
    int failed, rc;

    if (listing(argc, argv))
        return mpf_run_group_tests(tests, NULL, NULL);
    if (!jitter || !*jitter || strcmp(jitter, "0") == 0)
        fprintf(stderr, "test_seed_load: note: MPF_JITTER is off; the harness "
                        "is meant to run with it on\n");
    if ((rc = hogs_start()) != 0) {
        fprintf(stderr, "test_seed_load: cannot start the CPU hogs: %s\n",
                strerror(-rc));
        hogs_stop(&wall_s);
        return 1;
    }
    unsigned long long idle0 = 0, total0 = 0, idle1 = 0, total1 = 0;
    cpu_jiffies(&idle0, &total0);
    t0 = rt_now_s();
    failed = mpf_run_group_tests(tests, NULL, NULL);
    double run_s = rt_now_s() - t0;
    cpu_jiffies(&idle1, &total1);
    double idle = total1 > total0
                      ? (double)(idle1 - idle0) / (double)(total1 - total0)
                      : 1;
    unsigned hogs_ran = n_hogs;
    cpu_s = hogs_stop(&wall_s);
    double share = cpu_s < 0 ? 0 : cpu_s / (wall_s * hogs_ran);
    fprintf(stderr,
            "test_seed_load: %s round(s) of second_child_failure_reaps_first "
            "in %.1f s: %s; %u CPU hog(s) had %.1f CPU-s over %.1f s (%.0f%% "
            "of "
            "their cores); machine idle %.1f%%; MPF_JITTER=%s\n",
            repeat && *repeat ? repeat : "1", run_s,
            failed ? "FAILED" : "all passed", hogs_ran, cpu_s < 0 ? 0 : cpu_s,
            wall_s, 100 * share, 100 * idle,
            jitter && *jitter ? jitter : "off");
    if (cpu_s < 0) {
        fprintf(stderr,
                "test_seed_load: a CPU hog died on its own: the run was "
                "not under full load\n");
        return failed + 1;
    }
    /* Saturated: something was runnable on every core all the time (our
       hogs, the test's processes, or anything else on the machine). */
    if (idle > 0.05) {
        fprintf(stderr,
                "test_seed_load: the cores were not saturated (idle "
                "%.1f%%, hogs %.0f%%): the run was not under load\n",
                100 * idle, 100 * share);
        return failed + 1;
    }
    return failed;
}
