/* SPDX-License-Identifier: MIT */
/*
 * test_shm_evasions.c — /dev/shm objects a case leaves by a way of naming
 * them that is not "/dev/shm/<name>": a descriptor of /dev/shm (openat,
 * renameat, linkat, mkdirat), a doubled slash or a "." in the path, a
 * relative path from a working directory of /dev/shm. Each must be
 * ledgered, named and removed as the plain form is (not only a warning of
 * the /dev/shm watch, which a passing case's console never shows): each
 * case passes only if the report names its leak (mpf_expect), and the
 * group teardown fails the binary if anything of this run is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpfixture.h"

static char prefix[64]; /* "mpf-evade-<pid>" */

/* "/dev/shm/<prefix>-<what>" written the way `form` says. */
static const char *name_of(const char *what)
{
    static char name[128];
    snprintf(name, sizeof name, "%s-%s", prefix, what);
    return name;
}

static int shm_dir(void)
{
    int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    return fd;
}

static void close_new(int fd)
{
    assert_true(fd >= 0);
    close(fd);
}

static void openat_of_a_dev_shm_descriptor_is_ledgered(void **state)
{
    (void)state;
    int dir = shm_dir();
    close_new(openat(dir, name_of("openat"), O_CREAT | O_RDWR, 0600));
    close(dir);
    mpf_expect(MPF_SHM_LEAK, name_of("openat"));
}

static void doubled_slash_in_the_path_is_ledgered(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "/dev//shm//%s", name_of("slash"));
    close_new(open(path, O_CREAT | O_RDWR, 0600));
    mpf_expect(MPF_SHM_LEAK, name_of("slash"));
}

static void dot_in_the_path_is_ledgered(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "/dev/./shm/./%s", name_of("dot"));
    close_new(open(path, O_CREAT | O_EXCL | O_RDWR, 0600));
    mpf_expect(MPF_SHM_LEAK, name_of("dot"));
}

static void
relative_path_from_a_dev_shm_working_directory_is_ledgered(void **state)
{
    (void)state;
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir("/dev/shm"), 0);
    int fd = open(name_of("cwd"), O_CREAT | O_RDWR, 0600);
    assert_int_equal(chdir(here), 0);
    close_new(fd);
    mpf_expect(MPF_SHM_LEAK, name_of("cwd"));
}

/* The object is made the plain way (ledgered), then moved: its new name
   is the leak. */
static void renameat_of_a_dev_shm_descriptor_is_ledgered(void **state)
{
    (void)state;
    char from[160];
    snprintf(from, sizeof from, "/dev/shm/%s", name_of("before-rename"));
    close_new(open(from, O_CREAT | O_EXCL | O_RDWR, 0600));
    int dir = shm_dir();
    char to[128];
    snprintf(to, sizeof to, "%s", name_of("renamed"));
    assert_int_equal(renameat(dir, name_of("before-rename"), dir, to), 0);
    close(dir);
    mpf_expect(MPF_SHM_LEAK, to);
}

static void linkat_of_a_dev_shm_descriptor_is_ledgered(void **state)
{
    (void)state;
    char first[160];
    snprintf(first, sizeof first, "/dev/shm/%s", name_of("first"));
    close_new(open(first, O_CREAT | O_EXCL | O_RDWR, 0600));
    int dir = shm_dir();
    char second[128];
    snprintf(second, sizeof second, "%s", name_of("second"));
    assert_int_equal(linkat(dir, name_of("first"), dir, second, 0), 0);
    close(dir);
    assert_int_equal(unlink(first), 0);
    mpf_expect(MPF_SHM_LEAK, second);
}

static void mkdirat_of_a_dev_shm_descriptor_is_ledgered(void **state)
{
    (void)state;
    int dir = shm_dir();
    assert_int_equal(mkdirat(dir, name_of("dir"), 0700), 0);
    close(dir);
    mpf_expect(MPF_SHM_LEAK, name_of("dir"));
}

/* Nothing of this run is left in /dev/shm. */
static int group_teardown(void **state)
{
    (void)state;
    int left = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "left in /dev/shm: %s\n", e->d_name);
            char path[300];
            snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
            if (unlink(path) != 0)
                rmdir(path);
            left++;
        }
    if (d)
        closedir(d);
    return left ? -1 : 0;
}

int main(void)
{
    snprintf(prefix, sizeof prefix, "mpf-evade-%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        mpf_unit_test(openat_of_a_dev_shm_descriptor_is_ledgered, 5000),
        mpf_unit_test(doubled_slash_in_the_path_is_ledgered, 5000),
        mpf_unit_test(dot_in_the_path_is_ledgered, 5000),
        mpf_unit_test(
            relative_path_from_a_dev_shm_working_directory_is_ledgered, 5000),
        mpf_unit_test(renameat_of_a_dev_shm_descriptor_is_ledgered, 5000),
        mpf_unit_test(linkat_of_a_dev_shm_descriptor_is_ledgered, 5000),
        mpf_unit_test(mkdirat_of_a_dev_shm_descriptor_is_ledgered, 5000),
    };
    return mpf_run_group_tests(tests, NULL, group_teardown);
}
