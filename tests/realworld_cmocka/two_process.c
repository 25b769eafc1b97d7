/* SPDX-License-Identifier: MIT */
/*
 * two_process.c — a cmocka suite of a library that forks and shares
 * memory, written the way such projects write it (no mpfixture header):
 * group state, fork-based two-process tests that wait for their child, a
 * shared-memory handshake, a background thread, and two planted offences
 * that pass under plain cmocka: a shm object never unlinked and a worker
 * never stopped. Guarded, those two fail by name and the rest pass.
 */
/* As the project's own sources do (this corpus is others' code). */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

struct suite {
    char prefix[64]; /* shm names of this run: /corpus-two-<pid>- */
    int runs;
};

static int suite_setup(void **state)
{
    struct suite *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    snprintf(s->prefix, sizeof s->prefix, "/corpus-two-%d-", (int)getpid());
    *state = s;
    return 0;
}

static int suite_teardown(void **state)
{
    free(*state);
    return 0;
}

static void shm_name(const struct suite *s, const char *what, char *buf,
                     size_t size)
{
    snprintf(buf, size, "%s%s", s->prefix, what);
}

static void child_reports_through_a_pipe(void **state)
{
    struct suite *s = *state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        _exit(write(p[1], "ok", 2) == 2 ? 0 : 1);
    }
    close(p[1]);
    char buf[2];
    assert_int_equal(read(p[0], buf, 2), 2);
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    s->runs++;
}

static void shared_memory_handshake(void **state)
{
    struct suite *s = *state;
    char name[96];
    shm_name(s, "handshake", name, sizeof name);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), 0);
    int *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(word != MAP_FAILED);
    close(fd);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        *word = 42;
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(*word, 42);
    munmap(word, 4096);
    assert_int_equal(shm_unlink(name), 0);
    s->runs++;
}

static void *count_up(void *arg)
{
    int *n = arg;
    for (int i = 0; i < 1000; i++)
        (*n)++;
    return NULL;
}

static void background_thread_joins(void **state)
{
    (void)state;
    pthread_t t;
    int n = 0;
    assert_int_equal(pthread_create(&t, NULL, count_up, &n), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(n, 1000);
}

/* Planted: the object is never unlinked (passes under plain cmocka). */
static void forgets_to_unlink(void **state)
{
    struct suite *s = *state;
    char name[96];
    shm_name(s, "forgotten", name, sizeof name);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
}

/* Planted: the worker is never stopped (passes under plain cmocka). */
static void forgets_its_worker(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(child_reports_through_a_pipe),
        cmocka_unit_test(shared_memory_handshake),
        cmocka_unit_test(forgets_to_unlink),
        cmocka_unit_test(background_thread_joins),
        cmocka_unit_test(forgets_its_worker),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
