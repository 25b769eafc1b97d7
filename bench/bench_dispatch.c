/* SPDX-License-Identifier: MIT */
/*
 * bench_dispatch.c — dispatch latency, throughput and idle cost of a READY
 * tree, against the bare minimum with the same primitives.
 *
 *   bench_dispatch rtt BLOCKS BLOCK
 *       A 1-chip L3 and a two-process ping-pong on one shared page, both
 *       alive; BLOCKS rounds of BLOCK round trips each, alternating which
 *       goes first. Runtime: worker_run() of one NOOP chip task (submit,
 *       dispatch, TASK_DONE, collect, wake the caller). Ping-pong: store a
 *       sequence number and futex-wake, the peer spins 200 pauses
 *       (pinned to one CPU: yields once) then parks on the futex (the
 *       runtime child's wait), answers the same way. Prints "sample LABEL ROUND P50NS" per block and "stat LABEL
 *       P50 P90 N" over all round trips.
 *   bench_dispatch tput ROUNDS M
 *       A 1-chip and a 2-chip L3, both alive; per round one job of M NOOP
 *       tasks on the single chip and one job of M tasks alternating over
 *       the two chips. Prints "sample tput_1chip R TASKS_PER_S" and
 *       "sample tput_2chip R TASKS_PER_S".
 *   bench_dispatch idle SECONDS
 *       An 8-chip L3 brought to READY and run once (a task a chip, so the
 *       scheduler thread runs), then left alone for SECONDS: CPU
 *       time of the tree (every thread of this process but the measuring
 *       one, from its schedstat, plus every chip, clock_getcpuclockid)
 *       over the wall time. Prints "sample idle_cpu_8_chips 0 RATIO". The
 *       measuring thread is not the tree: its own clock reads and wake-up
 *       (10-100 us a window on this VM, varying 3x between runs) used to
 *       be counted, and made the ratio a measure of the measurement.
 *   bench_dispatch one rtt BLOCK
 *       For bench_tree's driver (fresh processes, builds compared): the
 *       median round trip of BLOCK runtime round trips in ns.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpfixture/worker.h>

#include "bench_util.h"

static worker *tree(unsigned chips)
{
    worker_options o = WORKER_OPTIONS_INIT;
    worker *w = NULL;
    int rc;

    o.level = 3;
    o.num_chips = chips;
    o.startup_timeout_s = 30;
    o.close_timeout_s = 10;
    if ((rc = worker_new(&w, &o)) || (rc = worker_init(w)))
        BENCH_DIE("init: %s (%s)", strerror(-rc),
                  w ? worker_last_error(w) : "");
    return w;
}

static void tree_close(worker *w)
{
    int rc = worker_close(w);
    if (rc)
        BENCH_DIE("close: %s (%s)", strerror(-rc), worker_last_error(w));
    worker_free(w);
}

struct plan {
    unsigned chips, m;
};

static int orch(worker_job *job, void *arg)
{
    const struct plan *p = arg;
    for (unsigned i = 0; i < p->m; i++) {
        int t = worker_submit_chip(job, i % p->chips, WORKER_KERNEL_NOOP, NULL,
                                   0);
        if (t < 0)
            return t;
    }
    return 0;
}

static int64_t rt_once(worker *w)
{
    struct plan p = { 1, 1 };
    int64_t t0 = bench_now_ns();
    int rc = worker_run(w, orch, &p);
    int64_t dt = bench_now_ns() - t0;
    if (rc)
        BENCH_DIE("run: %s (%s)", strerror(-rc), worker_last_error(w));
    return dt;
}

/* ---- ping-pong ---- */

struct pp {
    _Atomic uint32_t req, resp;
};

static struct pp *pp;
static pid_t pp_pid;

static void pp_start(void)
{
    pp = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
              -1, 0);
    if (pp == MAP_FAILED)
        BENCH_DIE("mmap: %s", strerror(errno));
    pp_pid = fork();
    if (pp_pid < 0)
        BENCH_DIE("fork: %s", strerror(errno));
    if (pp_pid == 0) {
        uint32_t last = 0;
        for (;;) {
            uint32_t v;
            while ((v = atomic_load_explicit(&pp->req, memory_order_acquire)) ==
                   last)
                bench_spin_then_park(&pp->req, last);
            if (v == UINT32_MAX)
                _exit(0);
            last = v;
            atomic_store_explicit(&pp->resp, v, memory_order_release);
            bench_futex_wake(&pp->resp, 1);
        }
    }
}

static int64_t pp_once(void)
{
    static uint32_t seq;
    int64_t t0 = bench_now_ns();
    uint32_t s = ++seq, v;
    atomic_store_explicit(&pp->req, s, memory_order_release);
    bench_futex_wake(&pp->req, 1);
    while ((v = atomic_load_explicit(&pp->resp, memory_order_acquire)) != s)
        bench_spin_then_park(&pp->resp, v);
    return bench_now_ns() - t0;
}

static void pp_stop(void)
{
    atomic_store_explicit(&pp->req, UINT32_MAX, memory_order_release);
    bench_futex_wake(&pp->req, 1);
    waitpid(pp_pid, NULL, 0);
    munmap(pp, 4096);
}

/* ---- modes ---- */

static void mode_rtt(int blocks, int block)
{
    worker *w = tree(1);
    pp_start();
    int64_t *all_rt = malloc(sizeof(int64_t) * (size_t)(blocks * block));
    int64_t *all_pp = malloc(sizeof(int64_t) * (size_t)(blocks * block));
    int64_t *blk = malloc(sizeof(int64_t) * (size_t)block);
    size_t nrt = 0, npp = 0;

    for (int i = 0; i < block; i++) { /* warm-up */
        rt_once(w);
        pp_once();
    }
    for (int r = 0; r < blocks; r++) {
        for (int k = 0; k < 2; k++) {
            bool rt = ((r + k) % 2) == 0;
            for (int i = 0; i < block; i++)
                blk[i] = rt ? rt_once(w) : pp_once();
            /* cppcheck-suppress uninitdata ; memcpy writes it */
            memcpy(rt ? all_rt + nrt : all_pp + npp, blk,
                   sizeof(int64_t) * (size_t)block);
            if (rt)
                nrt += (size_t)block;
            else
                npp += (size_t)block;
            printf("sample %s %d %lld\n", rt ? "dispatch_rtt" : "pingpong_rtt",
                   r, (long long)bench_quantile(blk, (size_t)block, 0.5));
        }
    }
    int64_t rt50 = bench_quantile(all_rt, nrt, 0.5),
            rt90 = bench_quantile(all_rt, nrt, 0.9);
    int64_t pp50 = bench_quantile(all_pp, npp, 0.5),
            pp90 = bench_quantile(all_pp, npp, 0.9);
    printf("stat dispatch_rtt %lld %lld %zu\n", (long long)rt50,
           (long long)rt90, nrt);
    printf("stat pingpong_rtt %lld %lld %zu\n", (long long)pp50,
           (long long)pp90, npp);
    pp_stop();
    tree_close(w);
    free(all_rt);
    free(all_pp);
    free(blk);
}

static int64_t cpu_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t chips_cpu_ns(worker *w)
{
    pid_t pids[64];
    size_t n = worker_child_pids(w, WORKER_CHILD_CHIP, pids, 64);
    int64_t sum = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        clockid_t id;
        if (clock_getcpuclockid(pids[i], &id) != 0)
            BENCH_DIE("clock_getcpuclockid(%d) failed", (int)pids[i]);
        int64_t c = cpu_ns(id);
        if (c < 0)
            BENCH_DIE("cpu clock of chip %zu: %s", i, strerror(errno));
        sum += c;
    }
    return sum;
}

static int64_t tree_cpu_ns(worker *w)
{
    return cpu_ns(CLOCK_PROCESS_CPUTIME_ID) + chips_cpu_ns(w);
}

static void mode_tput(int rounds, unsigned m)
{
    worker *w1 = tree(1), *w2 = tree(2);
    struct plan p1 = { 1, m }, p2 = { 2, m };
    int64_t cpu_parent[2] = { 0, 0 }, cpu_chips[2] = { 0, 0 },
            wall[2] = { 0, 0 };

    worker_run(w1, orch, &p1); /* warm-up */
    worker_run(w2, orch, &p2);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            bool one = ((r + k) % 2) == 0;
            worker *w = one ? w1 : w2;
            int64_t c0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID),
                    k0 = tree_cpu_ns(w) - c0;
            int64_t t0 = bench_now_ns();
            int rc = worker_run(w, orch, one ? &p1 : &p2);
            int64_t dt = bench_now_ns() - t0;
            int64_t c1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID),
                    k1 = tree_cpu_ns(w) - c1;
            cpu_parent[one ? 0 : 1] += c1 - c0;
            cpu_chips[one ? 0 : 1] += k1 - k0;
            wall[one ? 0 : 1] += dt;
            if (rc)
                BENCH_DIE("run: %s (%s)", strerror(-rc), worker_last_error(w));
            printf("sample %s %d %.0f\n", one ? "tput_1chip" : "tput_2chip", r,
                   (double)m * 1e9 / (double)dt);
        }
    }
    /* Where the time goes: CPU per task of this process (caller +
       scheduler thread) and of the chips, and the cores kept busy. */
    for (int i = 0; i < 2; i++) {
        double tasks = (double)m * rounds;
        printf("# tput %d chip(s): per task %.2f us wall, CPU %.2f us in the "
               "parent "
               "(caller + scheduler), %.2f us in the chips; %.2f cores busy\n",
               i + 1, wall[i] / 1e3 / tasks, cpu_parent[i] / 1e3 / tasks,
               cpu_chips[i] / 1e3 / tasks,
               (double)(cpu_parent[i] + cpu_chips[i]) / (double)wall[i]);
    }
    tree_close(w1);
    tree_close(w2);
}

/* Run time (ns) of every thread of this process but the calling one:
   the second field of /proc/self/task/<tid>/schedstat. */
static int64_t other_threads_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        BENCH_DIE("/proc/self/task: %s", strerror(errno));
    int64_t sum = 0;
    long self = (long)gettid();
    for (struct dirent *e; (e = readdir(d));) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == self)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
        FILE *f = fopen(path, "r");
        long long run = 0;
        if (!f || fscanf(f, "%lld", &run) != 1)
            BENCH_DIE("%s: cannot read", path);
        fclose(f);
        sum += run;
    }
    closedir(d);
    return sum;
}

/* CPU of the tree: the chips and this process's other threads. */
static int64_t idle_tree_cpu_ns(worker *w)
{
    return chips_cpu_ns(w) + other_threads_cpu_ns();
}

static void mode_idle(double seconds)
{
    worker *w = tree(8);
    struct timespec d = { (time_t)seconds,
                          (long)((seconds - (double)(time_t)seconds) * 1e9) };
    /* A task on every chip first: the scheduler thread starts with the
       first run, and each chip has served (and spun before parking). */
    struct plan every = { 8, 8 };
    int rc = worker_run(w, orch, &every);
    if (rc)
        BENCH_DIE("run: %s (%s)", strerror(-rc), worker_last_error(w));
    /* Let the tree settle (scheduler thread parked, chips parked). */
    struct timespec settle = { 0, 50 * 1000000 };
    nanosleep(&settle, NULL);

    int64_t m0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    int64_t c0 = idle_tree_cpu_ns(w), t0 = bench_now_ns();
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR)
        ;
    int64_t c1 = idle_tree_cpu_ns(w), t1 = bench_now_ns();
    int64_t m1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    printf("sample idle_cpu_8_chips 0 %.6f\n",
           (double)(c1 - c0) / (double)(t1 - t0));
    printf("# idle tree of 8 chips: %.1f us of CPU in %.3f s (the measuring "
           "thread, not counted: %.1f us)\n",
           (c1 - c0) / 1e3, (t1 - t0) / 1e9, (m1 - m0) / 1e3);
    tree_close(w);
}

int main(int argc, char **argv)
{
    (void)setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && !strcmp(argv[1], "rtt")) {
        mode_rtt(atoi(argv[2]), atoi(argv[3]));
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "tput")) {
        mode_tput(atoi(argv[2]), (unsigned)atoi(argv[3]));
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "idle")) {
        mode_idle(atof(argv[2]));
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "one") && !strcmp(argv[2], "rtt")) {
        int block = atoi(argv[3]);
        worker *w = tree(1);
        int64_t *v = malloc(sizeof(int64_t) * (size_t)block);
        for (int i = 0; i < block / 4; i++)
            rt_once(w);
        for (int i = 0; i < block; i++)
            v[i] = rt_once(w);
        tree_close(w);
        printf("%lld\n", (long long)bench_quantile(v, (size_t)block, 0.5));
        free(v);
        return 0;
    }
    fprintf(stderr,
            "usage: %s rtt BLOCKS BLOCK | tput ROUNDS M | idle SECONDS | "
            "one rtt BLOCK\n",
            argv[0]);
    return 2;
}
