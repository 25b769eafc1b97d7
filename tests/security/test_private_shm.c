/* SPDX-License-Identifier: MIT */
/*
 * test_private_shm.c — MPF_PRIVATE_SHM=1 gives the cases a /dev/shm of
 * their own: an object the ledger cannot see (created by a raw system
 * call, as a static binary or another language would) is then named as
 * the case's shm_leak, and nothing of it ever reaches the host's
 * /dev/shm. main() runs outside the cases' namespace and checks that.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

static char name[64]; /* set by main(), before the runner forks */

static void unledgered_object_is_named_in_a_private_dev_shm(void **state)
{
    (void)state;
    char path[96];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path,
                          O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    mpf_expect(MPF_SHM_LEAK, name);
}

int main(void)
{
    snprintf(name, sizeof name, "mpf-private-%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        mpf_unit_test(unledgered_object_is_named_in_a_private_dev_shm, 5000),
    };
    int failed = mpf_run_group_tests(tests, NULL, NULL);
    char path[96];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    if (stat(path, &st) == 0) {
        fprintf(stderr, "test_private_shm: %s reached the host's /dev/shm\n",
                path);
        unlink(path);
        return 1;
    }
    return failed;
}
