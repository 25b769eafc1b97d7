/* SPDX-License-Identifier: MIT */
/*
 * mailbox_full_fs.c — a chip's task ring on a full /dev/shm.
 *
 *   on_small_shm.sh mailbox_full_fs   (a small tmpfs on /dev/shm: root)
 *
 * A mailbox reserves its frame and the ring's first page at creation and
 * the rest at the chip's first task (runtime/src/wire/mailbox.h). With
 * /dev/shm full, that first task fails with ENOSPC, named, and no process
 * of the tree dies of SIGBUS; a chip whose ring was had before still
 * serves; once there is room again the first chip serves too, and the
 * tree closes cleanly. Prints what it saw, then "ok" (exit 0), or what
 * was wrong (exit 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpfixture/fakechips.h>

#define FILLER "/dev/shm/mpf-full-filler"

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stderr, "line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);           \
            fprintf(stderr, "\n");                  \
            return 1;                               \
        }                                           \
    } while (0)

/* More noops than the ring's first page holds (8 slots): a ring that was
   not reserved would be touched beyond what creation reserved. */
#define NOOPS 12

/* A task that fails at once is the job's failure (worker_wait's code,
   worker_job_error's text): the submissions' codes are not looked at. */
static int noops_on(worker_job *job, void *arg)
{
    for (int i = 0; i < NOOPS; i++)
        (void)worker_submit_chip(job, *(const unsigned *)arg,
                                 WORKER_KERNEL_NOOP, NULL, 0);
    return 0;
}

/* NOOPS noops on `chip`: worker_wait's code, the job's error in msg. */
static int noop(worker *w, unsigned chip, char *msg, size_t size)
{
    worker_job *job;
    int rc = worker_submit(w, noops_on, &chip, &job);
    if (rc != 0)
        return rc;
    rc = worker_wait(job, 10.0);
    snprintf(msg, size, "%s", worker_job_error(job));
    worker_job_free(job);
    return rc;
}

static void fill_dev_shm(void)
{
    int fd = open(FILLER, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    off_t at = 0;
    while (fd >= 0 && posix_fallocate(fd, at, 4096) == 0)
        at += 4096;
    if (fd >= 0)
        close(fd);
}

int main(void)
{
    mpfw_options o = MPFW_OPTIONS_INIT;
    mpfw_tree *t;
    char msg[512];
    int rc;

    o.startup_timeout_s = 5;
    CHECK(mpfw_tree_new(&t, "L3{chip,chip}", &o) == 0, "tree");
    worker *w = mpfw_tree_root(t);
    CHECK(worker_init(w) == 0, "init: %s", worker_last_error(w));
    CHECK(noop(w, 1, msg, sizeof msg) == 0, "chip 1 before: %s", msg);

    fill_dev_shm();
    rc = noop(w, 0, msg, sizeof msg);
    printf("chip 0's first task on a full /dev/shm: %d: %s\n", rc, msg);
    CHECK(rc == -ENOSPC && strstr(msg, "task ring could not be reserved: No "
                                       "space left on device"),
          "chip 0's first task did not fail as a full /dev/shm");
    rc = noop(w, 1, msg, sizeof msg);
    printf("chip 1 on a full /dev/shm: %d\n", rc);
    CHECK(rc == 0, "chip 1, its ring had before: %s", msg);

    CHECK(unlink(FILLER) == 0, "unlink the filler");
    rc = noop(w, 0, msg, sizeof msg);
    printf("chip 0 with room again: %d\n", rc);
    CHECK(rc == 0, "chip 0 with room again: %s", msg);
    CHECK(mpfw_tree_close(t) == 0, "close");
    printf("ok\n");
    return 0;
}
