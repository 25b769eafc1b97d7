/* SPDX-License-Identifier: MIT */
/*
 * bench_tree.c — startup, rollback and nesting of worker trees against the
 * bare minimum done with the same primitives, one measurement per fresh
 * process (what a test binary or a service pays at its first init).
 *
 *   bench_tree one VARIANT N      one measurement, prints nanoseconds
 *   bench_tree drive ROUNDS LABEL=EXE:VARIANT:N ...
 *                                 fork+exec EXE one VARIANT N for every
 *                                 case, ROUNDS times, the order rotated each
 *                                 round (interleaved); prints
 *                                 "sample LABEL ROUND NS" lines
 *
 * Variants (timed from before the first call to after the last unlink):
 *   rt N            worker_new(L3, N chips) + init to READY + close + free
 *   bare N          N shm mailboxes (shm_open, ftruncate, mmap), fork N;
 *                   each child stores READY, bumps a shared counter and
 *                   wakes the parent (futex), parks until SHUTDOWN, _exit;
 *                   the parent futex-waits for N, stores SHUTDOWN and wakes
 *                   each, reaps each, unmaps and unlinks each
 *   rt_rollback N   L3 with N chips, chip 7 scripted "fail": init returns
 *                   -EIO after its rollback, then free
 *   bare_rollback N N mailboxes, fork N (children park), SIGKILL all, reap
 *                   all, unmap and unlink all
 *   rt_l4 N         L4 with two next-level L3 children of N chips each
 *   rt_2xl3 N       two L3 of N chips, one after the other
 *
 * The driver exits non-zero if any measurement fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/worker.h>

#include "bench_util.h"

#define MAXN 64
#define READY 6u    /* MailboxState INIT_READY */
#define SHUTDOWN 3u /* MailboxState SHUTDOWN */

/* ---- libworker ---- */

static worker_options l3_options(unsigned chips)
{
    worker_options o = WORKER_OPTIONS_INIT;
    o.level = 3;
    o.num_chips = chips;
    o.startup_timeout_s = 30;
    o.rollback_timeout_s = 10;
    o.close_timeout_s = 10;
    return o;
}

static void rt_check(worker *w, const char *what, int rc)
{
    if (rc)
        BENCH_DIE("%s: %s (%s)", what, strerror(-rc),
                  w ? worker_last_error(w) : "");
}

static int64_t rt_startup(unsigned n)
{
    worker_options o = l3_options(n);
    worker *w = NULL;
    int64_t t0 = bench_now_ns();
    rt_check(w, "worker_new", worker_new(&w, &o));
    rt_check(w, "worker_init", worker_init(w));
    rt_check(w, "worker_close", worker_close(w));
    worker_free(w);
    return bench_now_ns() - t0;
}

static int64_t rt_rollback(unsigned n)
{
    worker_script s[MAXN];
    worker_options o = l3_options(n);
    worker *w = NULL;

    if (n < 8)
        BENCH_DIE("rt_rollback needs at least 8 chips");
    for (unsigned i = 0; i < n; i++)
        s[i] = (worker_script)WORKER_SCRIPT_INIT;
    s[7] = (worker_script){ WORKER_SCRIPT_FAIL, 0, "bench: chip 7 fails" };
    o.chip_scripts = s;
    int64_t t0 = bench_now_ns();
    rt_check(w, "worker_new", worker_new(&w, &o));
    int rc = worker_init(w);
    if (rc != -EIO)
        BENCH_DIE("rollback: init returned %d, want -EIO (%s)", rc,
                  worker_last_error(w));
    worker_free(w);
    return bench_now_ns() - t0;
}

static int64_t rt_l4(unsigned n)
{
    worker_options o = WORKER_OPTIONS_INIT, c = l3_options(n);
    worker *root = NULL, *kid;

    o.level = 4;
    o.startup_timeout_s = 30;
    o.close_timeout_s = 10;
    int64_t t0 = bench_now_ns();
    rt_check(root, "worker_new", worker_new(&root, &o));
    for (int i = 0; i < 2; i++) {
        rt_check(NULL, "worker_new", worker_new(&kid, &c));
        int id = worker_add_child(root, kid);
        if (id < 0)
            rt_check(root, "worker_add_child", id);
    }
    rt_check(root, "worker_init", worker_init(root));
    rt_check(root, "worker_close", worker_close(root));
    worker_free(root);
    return bench_now_ns() - t0;
}

/* ---- bare baselines ---- */

struct bare {
    unsigned n;
    char name[MAXN][48];
    _Atomic uint32_t *mb[MAXN]; /* word 0: state */
    pid_t pid[MAXN];
    _Atomic uint32_t *count; /* anonymous shared page: READY count */
};

static void bare_mailboxes(struct bare *b)
{
    for (unsigned i = 0; i < b->n; i++) {
        const char *tag = getenv("BENCH_TAG");
        snprintf(b->name[i], sizeof b->name[i], "/mpfbench-%s-bare-%d-%u",
                 tag ? tag : "x", (int)getpid(), i);
        int fd = shm_open(b->name[i], O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
                          0600);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            BENCH_DIE("shm %s: %s", b->name[i], strerror(errno));
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            BENCH_DIE("mmap: %s", strerror(errno));
        close(fd);
        b->mb[i] = p;
        atomic_store_explicit(b->mb[i], 0, memory_order_release);
    }
}

static void bare_release(struct bare *b)
{
    for (unsigned i = 0; i < b->n; i++) {
        munmap((void *)b->mb[i], 4096);
        shm_unlink(b->name[i]);
    }
}

static int64_t bare_startup(unsigned n)
{
    struct bare b = { .n = n };
    int64_t t0 = bench_now_ns();

    b.count = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b.count == MAP_FAILED)
        BENCH_DIE("mmap: %s", strerror(errno));
    bare_mailboxes(&b);
    for (unsigned i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            BENCH_DIE("fork: %s", strerror(errno));
        if (pid == 0) {
            _Atomic uint32_t *st = b.mb[i];
            atomic_store_explicit(st, READY, memory_order_release);
            atomic_fetch_add_explicit(b.count, 1, memory_order_release);
            bench_futex_wake(b.count, 1);
            uint32_t v;
            while ((v = atomic_load_explicit(st, memory_order_acquire)) !=
                   SHUTDOWN)
                bench_spin_then_park(st, v);
            _exit(0);
        }
        b.pid[i] = pid;
    }
    uint32_t c;
    while ((c = atomic_load_explicit(b.count, memory_order_acquire)) < n)
        bench_futex_wait(b.count, c);
    for (unsigned i = 0; i < n; i++) {
        atomic_store_explicit(b.mb[i], SHUTDOWN, memory_order_release);
        bench_futex_wake(b.mb[i], 1);
    }
    for (unsigned i = 0; i < n; i++) {
        int status;
        if (waitpid(b.pid[i], &status, 0) != b.pid[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            BENCH_DIE("bare child %u did not exit cleanly", i);
    }
    bare_release(&b);
    munmap((void *)b.count, 4096);
    return bench_now_ns() - t0;
}

static int64_t bare_rollback(unsigned n)
{
    struct bare b = { .n = n };
    int64_t t0 = bench_now_ns();

    bare_mailboxes(&b);
    for (unsigned i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            BENCH_DIE("fork: %s", strerror(errno));
        if (pid == 0) {
            for (;;)
                bench_futex_wait(b.mb[i], 0);
        }
        b.pid[i] = pid;
    }
    for (unsigned i = 0; i < n; i++)
        kill(b.pid[i], SIGKILL);
    for (unsigned i = 0; i < n; i++)
        waitpid(b.pid[i], NULL, 0);
    bare_release(&b);
    return bench_now_ns() - t0;
}

static int64_t one(const char *variant, unsigned n)
{
    if (n == 0 || n > MAXN)
        BENCH_DIE("N must be 1..%d", MAXN);
    if (!strcmp(variant, "rt"))
        return rt_startup(n);
    if (!strcmp(variant, "bare"))
        return bare_startup(n);
    if (!strcmp(variant, "rt_rollback"))
        return rt_rollback(n);
    if (!strcmp(variant, "bare_rollback"))
        return bare_rollback(n);
    if (!strcmp(variant, "rt_l4"))
        return rt_l4(n);
    if (!strcmp(variant, "rt_2xl3"))
        return rt_startup(n) + rt_startup(n);
    BENCH_DIE("unknown variant %s", variant);
}

/* ---- driver ---- */

struct bcase {
    char label[64];
    char exe[512];
    char variant[32];
    char n[8];
};

static int64_t run_fresh(const struct bcase *c)
{
    int p[2];
    if (pipe(p) != 0)
        BENCH_DIE("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        BENCH_DIE("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        execl(c->exe, c->exe, "one", c->variant, c->n, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char buf[64] = "";
    size_t off = 0;
    ssize_t r;
    while (off < sizeof buf - 1 &&
           (r = read(p[0], buf + off, sizeof buf - 1 - off)) > 0)
        off += (size_t)r;
    buf[off] = '\0';
    close(p[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        BENCH_DIE("%s (%s %s %s) failed, status %#x", c->label, c->exe,
                  c->variant, c->n, status);
    return strtoll(buf, NULL, 10);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "one")) {
        printf("%lld\n", (long long)one(argv[2], (unsigned)atoi(argv[3])));
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "drive")) {
        int rounds = atoi(argv[2]), nc = argc - 3;
        struct bcase *c = calloc((size_t)nc, sizeof *c);
        for (int i = 0; i < nc; i++) {
            /* LABEL=EXE:VARIANT:N */
            char *s = strdup(argv[3 + i]), *eq = strchr(s, '='), *c2, *c1;
            if (!eq || !(c2 = strrchr(eq, ':')) || c2 == eq)
                BENCH_DIE("bad case %s", argv[3 + i]);
            *c2 = '\0';
            if (!(c1 = strrchr(eq, ':')))
                BENCH_DIE("bad case %s", argv[3 + i]);
            *c1 = *eq = '\0';
            snprintf(c[i].label, sizeof c[i].label, "%s", s);
            snprintf(c[i].exe, sizeof c[i].exe, "%s", eq + 1);
            snprintf(c[i].variant, sizeof c[i].variant, "%s", c1 + 1);
            snprintf(c[i].n, sizeof c[i].n, "%s", c2 + 1);
            free(s);
        }
        for (int i = 0; i < nc; i++) /* warm the page cache: not recorded */
            run_fresh(&c[i]);
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < nc; k++) {
                const struct bcase *x = &c[(r + k) % nc];
                printf("sample %s %d %lld\n", x->label, r,
                       (long long)run_fresh(x));
            }
            fflush(stdout);
        }
        free(c);
        return 0;
    }
    fprintf(stderr,
            "usage: %s one VARIANT N | drive ROUNDS LABEL=EXE:VARIANT:N...\n",
            argv[0]);
    return 2;
}
