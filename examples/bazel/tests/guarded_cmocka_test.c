/* SPDX-License-Identifier: MIT */
/*
 * guarded_cmocka_test.c — eight cmocka cases under mpfixture, run by
 * bazel test in 4 shards. With --test_env=EXAMPLE_LEAK=1 one case leaves
 * a /dev/shm object: the guard fails it, and its shard's test.xml names
 * it with the kind (shm_leak) and the guard's report.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/cmocka.h>

static void adds(void **state)
{
    (void)state;
    assert_int_equal(2 + 2, 4);
}

static void compares(void **state)
{
    (void)state;
    assert_string_equal("mpf", "mpf");
}

static void forks_and_waits(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void shm_made_and_removed(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "/mpf-bazel-example-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
}

static void leaks_shm_when_asked(void **state)
{
    (void)state;
    const char *leak = getenv("EXAMPLE_LEAK");
    char name[64];
    snprintf(name, sizeof name, "/mpf-bazel-leak-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    if (!(leak && strcmp(leak, "1") == 0))
        shm_unlink(name);
}

static void pipes(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    close(p[1]);
}

static void allocates(void **state)
{
    (void)state;
    char *p = malloc(64);
    assert_non_null(p);
    free(p);
}

static void counts(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < 10; i++)
        n += i;
    assert_int_equal(n, 45);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adds),
        cmocka_unit_test(compares),
        cmocka_unit_test(forks_and_waits),
        cmocka_unit_test(shm_made_and_removed),
        cmocka_unit_test(leaks_shm_when_asked),
        cmocka_unit_test(pipes),
        cmocka_unit_test(allocates),
        cmocka_unit_test(counts),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
