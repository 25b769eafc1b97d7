/* SPDX-License-Identifier: MIT */
/*
 * test_pool.c — form (a) of the Meson example: a cmocka suite written for
 * mpfixture (mpf_unit_test, mpf_run_group_tests), whose cases meson.build
 * registers one meson test each (MPF_CASE=<case> runs that case alone).
 *
 * shares_and_removes is clean: a worker child writes into a /dev/shm
 * object, the case waits for it and removes the object. forgets_to_unlink
 * is the planted leak: it leaves its object (/dev/shm/example-pool-leak-
 * <pid>), and the guard fails that case alone as shm_leak, naming the
 * object, then removes it. Delete it to make the suite green.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/cmocka.h> /* cmocka.h, what it needs, and the adapter */

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
    int fd = make_object(name, sizeof name, "example-pool");
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
    int fd = make_object(name, sizeof name, "example-pool-leak");
    assert_true(fd >= 0);
    close(fd); /* the planted leak: no shm_unlink(name) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(shares_and_removes, 2000), /* budget in ms */
        mpf_unit_test(forgets_to_unlink, 2000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
