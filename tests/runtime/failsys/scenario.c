/* SPDX-License-Identifier: MIT */
/*
 * scenario.c — what the failsys sweep runs under the shim: three trees in
 * turn (a fourth, submit, when named), each started, used and closed, with
 * the runtime's public calls only (no fixture: the shim must see the
 * runtime's calls and nothing else's).
 *
 *   l4:       L4{sub, L3{sub, chip*2}}: init, a run (a sub task and a
 *             next-level task whose orchestration runs a sub task and two
 *             chip kernels), a control ping, close;
 *   device:   L3{sub, chip*2}: init, device alloc / copy to / checksum
 *             kernel / copy from / free, a DEVICE_REGIONS control, close;
 *   rollback: L3{sub*2, chip}, sub 1 fails its init: init fails, rolls
 *             back, close.
 *   submit:   L3{sub} (only when named: `scenario submit`): init, a run
 *             whose orchestration submits a sub task with a blob, then one
 *             with a dependency and no blob, close. A submit that fails
 *             with -ENOMEM must say "submit: out of memory" in
 *             worker_last_error() (not what an earlier call left there),
 *             and the run then reports that text; the step is named after
 *             the submit (blob_submit, deps_submit).
 *
 * Every call must return 0, -EIO (a child failed: its message says which)
 * or the injected error itself (the message then names it: strerror of
 * FAILSYS's errno, or "out of memory"); a step that failed ends its tree's run early (close is
 * always called). After each close: close returned 0, the journal is
 * empty, no child of ours is left (we are a child subreaper, so orphaned
 * grandchildren come back to us), no /dev/shm name of the tree is left
 * (with a private /dev/shm: nothing at all) and no descriptor leaked.
 * With FAILSYS_MUST_SURFACE=1 a failure injected in this process (not a
 * child) during a tree's run must make some call of it fail: the runtime
 * may not swallow it.
 *
 * One line per tree on stdout:
 *   <tree>: ok | error <rc> at <step> (<message>) [fired: <log lines>]
 * Exit status 0 when every check held, 1 (after "FAIL: …" on stderr) if
 * not. As root, the scenario first moves to a private /dev/shm.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/worker.h>

/* The runtime's reader of /proc/<pid>/task/<tid>/children (header-only). */
#include "../../../runtime/src/proc/children.h"

static bool private_shm;
static int injected; /* FAILSYS's errno, 0 if none */
static const char *log_path;
static int failures;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "FAIL: %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
            failures++;                                           \
        }                                                         \
    } while (0)

/* ---- what is left behind ---- */

static size_t count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    size_t n = 0;
    struct dirent *e;

    if (!d)
        return 0;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* Children of this process (every thread), zombies included. */
static size_t count_children(char *list, size_t size)
{
    pid_t kids[1024];
    size_t n = worker__children_of_process(0, kids, 1024), off = 0;

    list[0] = '\0';
    for (size_t i = 0; i < n && off < size; i++)
        off += (size_t)snprintf(list + off, size - off, " %ld", (long)kids[i]);
    return n;
}

/* /dev/shm names of the tree (prefix without its leading '/'), or every
   name with a private /dev/shm. */
static size_t count_shm(const char *prefix, char *list, size_t size)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    size_t n = 0, off = 0;

    list[0] = '\0';
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (!private_shm && (!prefix[0] || strncmp(e->d_name, prefix + 1,
                                                   strlen(prefix) - 1) != 0))
            continue;
        n++;
        if (off < size)
            off += (size_t)snprintf(list + off, size - off, " %s", e->d_name);
    }
    closedir(d);
    return n;
}

/* The shim's log from byte `from` on, one line per injected failure. */
static size_t read_log(long from, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!log_path)
        return 0;
    int fd = open(log_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t len = pread(fd, buf, size - 1, from);
    close(fd);
    if (len <= 0)
        return 0;
    buf[len] = '\0';
    return (size_t)len;
}

/* ---- one tree's run ---- */

struct outcome {
    int rc;
    const char *step;
    char msg[WORKER_ERROR_MAX];
};

/* Record a step's result: 0, -EIO or the injected error are allowed (the
   latter must be named in the message); true when the run goes on. */
static bool step(struct outcome *o, worker *w, const char *what, int rc)
{
    if (rc >= 0)
        return true;
    o->rc = rc;
    o->step = what;
    snprintf(o->msg, sizeof(o->msg), "%s", worker_last_error(w));
    CHECK(rc == -EIO || (injected && rc == -injected), "%s returned %d (%s)",
          what, rc, o->msg);
    /* The message names the cause: strerror's text, or in the runtime's
       own words for memory. */
    if (injected && rc == -injected)
        CHECK(strstr(o->msg, strerror(injected)) != NULL ||
                  (injected == ENOMEM && strstr(o->msg, "out of memory")),
              "%s: %d without \"%s\" in \"%s\"", what, rc, strerror(injected),
              o->msg);
    CHECK(o->msg[0] != '\0', "%s returned %d with no message", what, rc);
    return false;
}

/* Every sub task of the scenario carries a one-byte blob. */
static int sub_one_byte(void *arg, const void *args, size_t len, char *msg,
                        size_t msg_size)
{
    (void)arg;
    if (len == 1 && args)
        return 0;
    snprintf(msg, msg_size, "blob of %zu bytes", len);
    return 1;
}

/* The nested L3's orchestration: a sub task, then fill + checksum on the
   chips' base memory. */
static int nested_orch(worker_job *job, void *arg)
{
    (void)arg;
    uint64_t fill[3] = { WORKER_DEVPTR(0, 0), 16, 3 };
    uint64_t sum[2] = { WORKER_DEVPTR(0, 0), 16 };
    int rc;
    size_t len = 0;

    /* The blob the root's next-level task carried, copied into this run. */
    if (!worker_job_args(job, &len) || len != 1)
        return worker_job_fail(job, -EPROTO, "next-level blob of %zu bytes",
                               len);

    if ((rc = worker_submit_sub(job, WORKER_ANY, 0, "x", 1)) < 0 ||
        (rc = worker_submit_chip(job, 0, WORKER_KERNEL_FILL, fill, 3)) < 0 ||
        (rc = worker_submit_chip(job, 1, WORKER_KERNEL_CHECKSUM, sum, 2)) < 0)
        return rc;
    return 0;
}

static int root_orch(worker_job *job, void *arg)
{
    (void)arg;
    int rc;

    if ((rc = worker_submit_sub(job, 0, 0, "y", 1)) < 0 ||
        (rc = worker_submit_next(job, 0, 0, "z", 1)) < 0)
        return rc;
    return 0;
}

static worker_options base_options(int level)
{
    worker_options o = WORKER_OPTIONS_INIT;
    o.level = level;
    o.startup_timeout_s = 10;
    o.rollback_timeout_s = 2;
    o.close_timeout_s = 3;
    o.drain_timeout_s = 10;
    return o;
}

static void tree_l4(worker *w, struct outcome *o)
{
    uint64_t pid = 0;

    if (!step(o, w, "init", worker_init(w)) ||
        !step(o, w, "run", worker_run(w, root_orch, NULL)) ||
        !step(o, w, "control",
              worker_control(w, WORKER_CHILD_SUB, 0, WORKER_CONTROL_PING, 0,
                             10.0, &pid)))
        return;
    CHECK(pid > 0, "ping answered pid %llu", (unsigned long long)pid);
}

static int checksum_orch(worker_job *job, void *arg)
{
    const uint64_t *kargs = arg;
    int id = worker_submit_chip(job, 1, WORKER_KERNEL_CHECKSUM, kargs, 2);
    return id < 0 ? id : 0;
}

static void tree_device(worker *w, struct outcome *o)
{
    uint32_t in[64], out[64];
    uint64_t sum = 0, regions = 0;
    worker_devptr p;
    worker_job *job;

    for (unsigned i = 0; i < 64; i++)
        in[i] = i + 1;
    if (!step(o, w, "init", worker_init(w)) ||
        !step(o, w, "device_alloc", worker_device_alloc(w, 1, sizeof(in), &p)))
        return;
    uint64_t kargs[2] = { p, 64 };
    if (!step(o, w, "copy_to",
              worker_device_copy_to(w, 1, p, in, sizeof(in))) ||
        !step(o, w, "submit", worker_submit(w, checksum_orch, kargs, &job)))
        goto free;
    int rc = worker_wait(job, WORKER_WAIT_FOREVER);
    if (rc == 0)
        rc = worker_job_result(job, 0, &sum);
    worker_job_free(job);
    if (!step(o, w, "checksum", rc))
        goto free;
    CHECK(sum == 64 * 65 / 2, "checksum %llu", (unsigned long long)sum);
    if (!step(o, w, "copy_from",
              worker_device_copy_from(w, 1, out, p, sizeof(out))))
        goto free;
    CHECK(memcmp(in, out, sizeof(in)) == 0, "copy_from differs");
    if (!step(o, w, "control",
              worker_control(w, WORKER_CHILD_CHIP, 1,
                             WORKER_CONTROL_DEVICE_REGIONS, 0, 10.0, &regions)))
        goto free;
    CHECK(regions == 1, "DEVICE_REGIONS answered %llu",
          (unsigned long long)regions);
free:
    /* Freed even after a failed step: close() would name a leak. */
    step(o, w, "device_free", worker_device_free(w, 1, p));
}

static void tree_rollback(worker *w, struct outcome *o)
{
    worker_rollback_report r;
    int rc = worker_init(w);

    CHECK(rc < 0, "init of a tree with a failing sub returned %d", rc);
    if (worker_get_state(w) == WORKER_NEW) {
        /* A resource that failed before the epoch began (the doorbell):
           nothing was forked, the worker stays NEW and can init again. */
        CHECK(injected && rc == -injected, "NEW after init returned %d", rc);
        CHECK(worker_last_rollback(w, &r) == -ENOENT,
              "a rollback report without an epoch");
        step(o, w, "init", rc);
        rc = worker_init(w);
        CHECK(rc == -EIO, "the retried init returned %d", rc);
    }
    step(o, w, "init", rc);
    CHECK(worker_last_rollback(w, &r) == 0 && r.happened, "no rollback report");
    CHECK(worker_get_state(w) == WORKER_FAILED, "state %s after a failed init",
          worker_state_name(worker_get_state(w)));
}

/* The submit tree's sub callable 1: any blob, or none. */
static int sub_any(void *arg, const void *args, size_t len, char *msg,
                   size_t msg_size)
{
    (void)arg;
    (void)args;
    (void)len;
    (void)msg;
    (void)msg_size;
    return 0;
}

/* What the submit tree's orchestration saw: the submit that failed with
   -ENOMEM, if one did. */
struct submit_probe {
    const char *enomem_at;
};

/* Leaves a known text in worker_last_error(w) (a refused registration,
   which touches no job), so that a submit that does not set its own is
   seen. */
static void stamp_last_error(worker *w)
{
    int rc = worker_register_sub(w, "stamp", NULL, NULL);

    CHECK(rc == -EINVAL &&
              strcmp(worker_last_error(w), "register: NULL function") == 0,
          "stamp: register returned %d (%s)", rc, worker_last_error(w));
}

/* One submit of the submit tree: -ENOMEM must have set the handle's
   error. Returns rc. */
static int probe_submit(worker_job *job, struct submit_probe *p,
                        const char *what, const worker_task *t)
{
    worker *w = worker_job_worker(job);
    int rc;

    stamp_last_error(w);
    rc = worker_submit_task(job, t);
    if (rc == -ENOMEM) {
        p->enomem_at = what;
        CHECK(strcmp(worker_last_error(w), "submit: out of memory") == 0,
              "%s: -ENOMEM left worker_last_error() at \"%s\"", what,
              worker_last_error(w));
    }
    return rc;
}

static int submit_orch(worker_job *job, void *arg)
{
    struct submit_probe *p = arg;
    worker_task t = WORKER_TASK_INIT;
    int first, deps[1];

    /* Sub 0, callable 0, a one-byte blob: the blob is copied. */
    t.target = 0;
    t.args = "b";
    t.args_len = 1;
    if ((first = probe_submit(job, p, "blob_submit", &t)) < 0)
        return first;
    /* Sub 0, callable 1, after the first task, no blob: the deps are
       copied (and nothing else). */
    deps[0] = first;
    t = (worker_task)WORKER_TASK_INIT;
    t.target = 0;
    t.callable = 1;
    t.deps = deps;
    t.ndeps = 1;
    int rc = probe_submit(job, p, "deps_submit", &t);
    return rc < 0 ? rc : 0;
}

static void tree_submit(worker *w, struct outcome *o)
{
    struct submit_probe p = { NULL };

    if (!step(o, w, "init", worker_init(w)))
        return;
    int rc = worker_run(w, submit_orch, &p);
    if (p.enomem_at) {
        CHECK(rc == -ENOMEM, "%s failed with -ENOMEM, the run returned %d",
              p.enomem_at, rc);
        /* The orchestration returned the submit's code: the run reports
           the submit's text (note_submit_error in job.c). */
        CHECK(strcmp(worker_last_error(w), "submit: out of memory") == 0,
              "%s: the run's error is \"%s\"", p.enomem_at,
              worker_last_error(w));
    }
    step(o, w, p.enomem_at ? p.enomem_at : "run", rc);
}

static int build(const char *name, worker **ret)
{
    worker_options o;
    worker *w, *n;
    int rc;

    if (strcmp(name, "l4") == 0) {
        o = base_options(4);
        o.num_subs = 1;
        if ((rc = worker_new(&w, &o)))
            return rc;
        o = base_options(3);
        o.num_subs = 1;
        o.num_chips = 2;
        if ((rc = worker_new(&n, &o))) {
            worker_free(w);
            return rc;
        }
        if ((rc = worker_add_child(w, n)) < 0 ||
            (rc = worker_register_sub(w, "ok", sub_one_byte, NULL)) < 0 ||
            (rc = worker_register_sub(n, "ok", sub_one_byte, NULL)) < 0 ||
            (rc = worker_register_orch(n, "nested", nested_orch, NULL)) < 0) {
            worker_free(w);
            worker_free(n);
            return rc;
        }
    } else if (strcmp(name, "submit") == 0) {
        o = base_options(3);
        o.num_subs = 1;
        if ((rc = worker_new(&w, &o)))
            return rc;
        if ((rc = worker_register_sub(w, "ok", sub_one_byte, NULL)) < 0 ||
            (rc = worker_register_sub(w, "any", sub_any, NULL)) < 0) {
            worker_free(w);
            return rc;
        }
    } else if (strcmp(name, "device") == 0) {
        o = base_options(3);
        o.num_subs = 1;
        o.num_chips = 2;
        if ((rc = worker_new(&w, &o)))
            return rc;
    } else {
        static const worker_script subs[2] = {
            { WORKER_SCRIPT_OK, 0, NULL },
            { WORKER_SCRIPT_FAIL, 0, "scripted" },
        };
        o = base_options(3);
        o.num_subs = 2;
        o.num_chips = 1;
        o.sub_scripts = subs;
        if ((rc = worker_new(&w, &o)))
            return rc;
    }
    *ret = w;
    return 0;
}

static void run_tree(const char *name)
{
    struct outcome o = { 0, NULL, "" };
    char prefix[64], kids[256], shm[512], fired[1024];
    struct stat st;
    long log_from = log_path && stat(log_path, &st) == 0 ? (long)st.st_size : 0;
    size_t fds = count_fds();
    worker *w;
    int rc;

    /* worker_new only allocates: out of memory is its one failure. */
    prefix[0] = '\0';
    rc = build(name, &w);
    if (rc) {
        CHECK(rc == -ENOMEM && injected == ENOMEM, "%s: worker_new: %d", name,
              rc);
        o.rc = rc;
        o.step = "worker_new";
        snprintf(o.msg, sizeof(o.msg), "%s", strerror(-rc));
    } else {
        if (strcmp(name, "l4") == 0)
            tree_l4(w, &o);
        else if (strcmp(name, "device") == 0)
            tree_device(w, &o);
        else if (strcmp(name, "submit") == 0)
            tree_submit(w, &o);
        else
            tree_rollback(w, &o);
        snprintf(prefix, sizeof(prefix), "%s", worker_shm_prefix(w));
        rc = worker_close(w);
        CHECK(rc == 0, "%s: close returned %d (%s)", name, rc,
              worker_last_error(w));
        CHECK(worker_journal_size(w) == 0, "%s: %zu journal entries", name,
              worker_journal_size(w));
        CHECK(worker_get_state(w) == WORKER_CLOSED, "%s: state %s", name,
              worker_state_name(worker_get_state(w)));
        worker_free(w);
    }

    size_t nk = count_children(kids, sizeof(kids));
    CHECK(nk == 0, "%s: %zu processes left:%s", name, nk, kids);
    size_t ns = count_shm(prefix, shm, sizeof(shm));
    CHECK(ns == 0, "%s: %zu /dev/shm names left:%s", name, ns, shm);
    size_t now = count_fds();
    CHECK(now == fds, "%s: %zu descriptors before, %zu after", name, fds, now);

    read_log(log_from, fired, sizeof(fired));
    bool in_parent = false;
    for (char *l = fired; (l = strstr(l, " parent\n")); l++)
        in_parent = true;
    const char *must = getenv("FAILSYS_MUST_SURFACE");
    if (must && strcmp(must, "1") == 0)
        CHECK(!in_parent || o.rc != 0,
              "%s: a failure injected in the caller's process was swallowed "
              "(every call returned 0)",
              name);
    for (char *p = fired; *p; p++)
        if (*p == '\n' && p[1])
            *p = ';';
    fired[strcspn(fired, "\n")] = '\0';
    if (o.rc)
        printf("%s: error %d at %s (%s)", name, o.rc, o.step, o.msg);
    else
        printf("%s: ok", name);
    printf(fired[0] ? " [fired: %s]\n" : "\n", fired);
    /* Reap whatever a failed check left, so the next tree starts clean. */
    while (nk && waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(int argc, char **argv)
{
    /* The first three by default; submit only when named. */
    static const char *const trees[] = { "l4", "device", "rollback", "submit" };
    const char *spec = getenv("FAILSYS");

    if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=64m") == 0)
        private_shm = true;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    log_path = getenv("FAILSYS_LOG");
    if (spec) {
        /* <function>:<n>:<errno name>[:role]; the shim checked the form. */
        static const struct {
            const char *name;
            int value;
        } names[] = { { "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM },
                      { "EMFILE", EMFILE }, { "ENOSPC", ENOSPC },
                      { "EINVAL", EINVAL }, { "EPERM", EPERM },
                      { "ENOSYS", ENOSYS }, { "EACCES", EACCES } };
        const char *e = strchr(spec, ':');
        e = e ? strchr(e + 1, ':') : NULL;
        for (size_t i = 0; e && i < sizeof(names) / sizeof(names[0]); i++)
            if (strncmp(e + 1, names[i].name, strlen(names[i].name)) == 0)
                injected = names[i].value;
    }
    for (int i = 0; i < 4; i++)
        if ((argc < 2 && i < 3) ||
            (argc >= 2 && strcmp(argv[1], trees[i]) == 0))
            run_tree(trees[i]);
    return failures ? 1 : 0;
}
