/* SPDX-License-Identifier: MIT */
/*
 * vector_add.c — libworker in one page: bring up an L3 worker with four
 * simulated chips, split a vector add across them, check the result, close.
 *
 *   build/bin/vector_add [elements]      (default 1048576)
 *
 * Each chip gets a quarter of the vectors in its own device memory
 * (worker_device_alloc + copy_to), the orchestration function submits one
 * vector_add kernel per chip and a checksum after it (tasks to one chip run
 * in submission order), and the results come back with copy_from. Exit
 * status 0 when every element and checksum is right, 1 otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfixture/worker.h>

#define CHIPS 4

struct plan {
    size_t per_chip; /* elements per chip */
    worker_devptr a[CHIPS], b[CHIPS], c[CHIPS];
    int sum_task[CHIPS]; /* task id of each chip's checksum */
};

/* The orchestration function: runs on the caller's thread, only submits. */
static int orchestrate(worker_job *job, void *arg)
{
    struct plan *p = arg;

    for (unsigned i = 0; i < CHIPS; i++) {
        uint64_t add[4] = { p->a[i], p->b[i], p->c[i], p->per_chip };
        uint64_t sum[2] = { p->c[i], p->per_chip };
        int t = worker_submit_chip(job, i, WORKER_KERNEL_VECTOR_ADD, add, 4);

        if (t < 0)
            return t;
        if ((p->sum_task[i] = worker_submit_chip(job, i, WORKER_KERNEL_CHECKSUM,
                                                 sum, 2)) < 0)
            return p->sum_task[i];
    }
    return 0;
}

static int fail(worker *w, const char *what, int rc)
{
    fprintf(stderr, "vector_add: %s: %s (%s)\n", what, strerror(-rc),
            w ? worker_last_error(w) : "");
    return rc;
}

static int run(worker *w, size_t n, uint32_t *a, uint32_t *b, uint32_t *c)
{
    struct plan p = { .per_chip = n / CHIPS };
    size_t bytes = p.per_chip * sizeof(uint32_t);
    worker_job *job;
    int rc;

    for (unsigned i = 0; i < CHIPS; i++) {
        if ((rc = worker_device_alloc(w, i, bytes, &p.a[i])) ||
            (rc = worker_device_alloc(w, i, bytes, &p.b[i])) ||
            (rc = worker_device_alloc(w, i, bytes, &p.c[i])))
            return fail(w, "device_alloc", rc);
        if ((rc = worker_device_copy_to(w, i, p.a[i], a + i * p.per_chip,
                                        bytes)) ||
            (rc = worker_device_copy_to(w, i, p.b[i], b + i * p.per_chip,
                                        bytes)))
            return fail(w, "copy_to", rc);
    }
    if ((rc = worker_submit(w, orchestrate, &p, &job)))
        return fail(w, "submit", rc);
    rc = worker_wait(job, WORKER_WAIT_FOREVER);
    if (rc) {
        fprintf(stderr, "vector_add: run failed: %s\n", worker_job_error(job));
        worker_job_free(job);
        return rc;
    }
    for (unsigned i = 0; i < CHIPS; i++) {
        uint64_t sum = 0, want = 0;

        if ((rc = worker_device_copy_from(w, i, c + i * p.per_chip, p.c[i],
                                          bytes)))
            return fail(w, "copy_from", rc);
        worker_job_result(job, p.sum_task[i], &sum);
        for (size_t k = 0; k < p.per_chip; k++)
            want += c[i * p.per_chip + k];
        if (sum != want) {
            fprintf(stderr,
                    "vector_add: chip %u checksum %" PRIu64 ", want %" PRIu64
                    "\n",
                    i, sum, want);
            rc = -EIO;
        }
    }
    worker_job_free(job);
    for (unsigned i = 0; i < CHIPS; i++) {
        worker_device_free(w, i, p.a[i]);
        worker_device_free(w, i, p.b[i]);
        worker_device_free(w, i, p.c[i]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    worker_options opt = WORKER_OPTIONS_INIT;
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1u << 20;
    uint32_t *a, *b, *c;
    worker *w = NULL;
    int rc, bad = 0;

    n -= n % CHIPS;
    if (n == 0 || n / CHIPS * sizeof(uint32_t) > WORKER_DEVICE_ALLOC_MAX) {
        fprintf(stderr, "usage: vector_add [elements, a multiple of %d]\n",
                CHIPS);
        return 2;
    }
    a = malloc(n * sizeof(*a));
    b = malloc(n * sizeof(*b));
    c = malloc(n * sizeof(*c));
    if (!a || !b || !c) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)i;
        b[i] = (uint32_t)(3 * i + 7);
    }

    opt.level = 3;
    opt.num_chips = CHIPS;
    opt.startup_timeout_s = 10;
    opt.close_timeout_s = 5;
    if ((rc = worker_new(&w, &opt)) || (rc = worker_init(w))) {
        fail(w, "init", rc);
        goto out;
    }
    rc = run(w, n, a, b, c);
    for (size_t i = 0; !rc && i < n; i++)
        if (c[i] != a[i] + b[i] && bad++ < 5)
            fprintf(stderr, "vector_add: c[%zu] = %u, want %u\n", i, c[i],
                    a[i] + b[i]);
    if (worker_close(w))
        rc = fail(w, "close", -EIO);
out:
    worker_free(w);
    free(a);
    free(b);
    free(c);
    if (rc || bad)
        return 1;
    printf("vector_add: %zu elements on %d simulated chips: ok\n", n, CHIPS);
    return 0;
}
