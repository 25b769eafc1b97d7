/* SPDX-License-Identifier: MIT */
/*
 * test_plain.c — form (b) of the autotools example: a cmocka suite that
 * knows nothing of mpfixture (cmocka_unit_test, cmocka_run_group_tests),
 * built against cmocka alone. Plain, it passes both cases and its leak
 * stays in /dev/shm; unmodified/Makefile.am runs it under
 * `mpf-run --per-case` (LOG_COMPILER), which guards each case on its own:
 * the planted leak (forgets_to_unlink) fails as shm_leak, by name, and is
 * removed.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* make_object: a new /dev/shm object "/<prefix>-<pid>", its name in name. */
static int make_object(char *name, size_t size, const char *prefix)
{
    snprintf(name, size, "/%s-%ld", prefix, (long)getpid());
    return shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
}

static void shares_and_removes(void **state)
{
    (void)state;
    char name[64];
    int fd = make_object(name, sizeof name, "example-plain");
    assert_true(fd >= 0);
    pid_t worker = fork();
    assert_true(worker >= 0);
    if (worker == 0)
        _exit(write(fd, "x", 1) == 1 ? 0 : 1);
    int status;
    assert_int_equal(waitpid(worker, &status, 0), worker);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
}

static void forgets_to_unlink(void **state)
{
    (void)state;
    char name[64];
    int fd = make_object(name, sizeof name, "example-plain-leak");
    assert_true(fd >= 0);
    close(fd); /* the planted leak: no shm_unlink(name) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_and_removes),
        cmocka_unit_test(forgets_to_unlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
