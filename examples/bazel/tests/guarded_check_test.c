/* SPDX-License-Identifier: MIT */
/*
 * guarded_check_test.c — six Check tests under mpfixture, in Check's
 * fork mode, run by bazel test in 4 shards. With
 * --test_env=EXAMPLE_LEAK=1 one test leaves a /dev/shm object: the guard
 * fails it, and its shard's test.xml names it with the kind (shm_leak)
 * and the guard's report.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/check.h>

START_TEST(check_adds)
{
    ck_assert_int_eq(2 + 2, 4);
}
END_TEST

START_TEST(check_forks_and_waits)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}
END_TEST

START_TEST(check_shm_made_and_removed)
{
    char name[64];
    snprintf(name, sizeof name, "/mpf-bazel-check-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(shm_unlink(name), 0);
}
END_TEST

START_TEST(check_leaks_shm_when_asked)
{
    const char *leak = getenv("EXAMPLE_LEAK");
    char name[64];
    snprintf(name, sizeof name, "/mpf-bazel-check-leak-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    if (!(leak && strcmp(leak, "1") == 0))
        shm_unlink(name);
}
END_TEST

START_TEST(check_pipes)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], "x", 1), 1);
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    close(p[1]);
}
END_TEST

START_TEST(check_counts)
{
    int n = 0;
    for (int i = 0; i < 10; i++)
        n += i;
    ck_assert_int_eq(n, 45);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("example");
    TCase *tc = tcase_create("Example");
    tcase_add_test(tc, check_adds);
    tcase_add_test(tc, check_forks_and_waits);
    tcase_add_test(tc, check_shm_made_and_removed);
    tcase_add_test(tc, check_leaks_shm_when_asked);
    tcase_add_test(tc, check_pipes);
    tcase_add_test(tc, check_counts);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    int failed = mpf_srunner_run_all(sr, CK_NORMAL); /* fork mode */
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
