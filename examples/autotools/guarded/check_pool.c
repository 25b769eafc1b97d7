/* SPDX-License-Identifier: MIT */
/*
 * check_pool.c — form (a) of the autotools example: a Check suite whose
 * main() calls mpf_srunner_run_all() in place of srunner_run_all(), so
 * every Check test is guarded on its own and an offence is that test's
 * failure in Check's own output (here its TAP line).
 *
 * shares_and_removes is clean: a worker child writes into a /dev/shm
 * object, the test waits for it and removes the object. forgets_to_unlink
 * is the planted leak: it leaves its object (/dev/shm/example-check-leak-
 * <pid>), and the guard fails that test alone as shm_leak, naming the
 * object, then removes it. Delete it to make the suite green.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/check.h> /* check.h and the adapter */

/* make_object: a new /dev/shm object "/<prefix>-<pid>", its name in name. */
static int make_object(char *name, size_t size, const char *prefix)
{
    snprintf(name, size, "/%s-%ld", prefix, (long)getpid());
    return shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
}

START_TEST(shares_and_removes)
{
    char name[64];
    int fd = make_object(name, sizeof name, "example-check");
    ck_assert_int_ge(fd, 0);
    pid_t worker = fork();
    ck_assert_int_ge(worker, 0);
    if (worker == 0)
        _exit(write(fd, "x", 1) == 1 ? 0 : 1);
    int status;
    ck_assert_int_eq(waitpid(worker, &status, 0), worker);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fd);
    ck_assert_int_eq(shm_unlink(name), 0);
}
END_TEST

START_TEST(forgets_to_unlink)
{
    char name[64];
    int fd = make_object(name, sizeof name, "example-check-leak");
    ck_assert_int_ge(fd, 0);
    close(fd); /* the planted leak: no shm_unlink(name) */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, shares_and_removes);
    tcase_add_test(tc, forgets_to_unlink);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    int failed = mpf_srunner_run_all(sr, CK_NORMAL);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
