/* SPDX-License-Identifier: MIT */
/*
 * test_shm_evasions.c — /dev/shm objects a case leaves by a way of naming
 * them that is not "/dev/shm/<name>": a descriptor of /dev/shm (openat,
 * renameat, linkat, mkdirat), a doubled slash or a "." in the path, a
 * relative path from a working directory of /dev/shm, renameat2() with
 * RENAME_NOREPLACE, an unnamed file linked in by its descriptor. Renames
 * and links that fail, or that stay outside /dev/shm, keep their own
 * result and are not ledgered. Each must be
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

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

/* renameat2() with RENAME_NOREPLACE into a free name: the new name. */
static void renameat2_noreplace_is_ledgered(void **state)
{
    (void)state;
    char from[160];
    snprintf(from, sizeof from, "/dev/shm/%s", name_of("before-rename2"));
    close_new(open(from, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
    int dir = shm_dir();
    char to[128];
    snprintf(to, sizeof to, "%s", name_of("renamed2"));
    assert_int_equal(renameat2(dir, name_of("before-rename2"), dir, to,
                               RENAME_NOREPLACE),
                     0);
    close(dir);
    mpf_expect(MPF_SHM_LEAK, to);
}

/* A descriptor of an unnamed file (O_TMPFILE) linked into /dev/shm by
   AT_EMPTY_PATH: the object the descriptor holds, under its new name. */
static void linkat_of_an_unnamed_file_is_ledgered(void **state)
{
    (void)state;
    int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        skip(); /* no O_TMPFILE on this /dev/shm */
    int dir = shm_dir();
    int rc = linkat(fd, "", dir, name_of("tmpfile"), AT_EMPTY_PATH);
    int err = errno;
    close(dir);
    close(fd);
    if (rc != 0 && (err == ENOENT || err == EPERM))
        skip(); /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH */
    assert_int_equal(rc, 0);
    mpf_expect(MPF_SHM_LEAK, name_of("tmpfile"));
}

/* Renames and links into /dev/shm that fail: the caller gets the call's
   own error, both names stay what they were, and the case, which removes
   what it made, leaves nothing (no report). */
static void failed_renames_and_links_keep_their_errors(void **state)
{
    (void)state;
    char a[160], b[160];
    snprintf(a, sizeof a, "/dev/shm/%s", name_of("taken-a"));
    snprintf(b, sizeof b, "/dev/shm/%s", name_of("taken-b"));
    close_new(open(a, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
    close_new(open(b, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
    struct stat before, after;
    assert_int_equal(stat(b, &before), 0);
    errno = 0;
    assert_int_equal(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE), -1);
    assert_int_equal(errno, EEXIST);
    errno = 0;
    assert_int_equal(link(a, b), -1);
    assert_int_equal(errno, EEXIST);
    char missing[160];
    snprintf(missing, sizeof missing, "/dev/shm/%s", name_of("missing"));
    errno = 0;
    assert_int_equal(rename(missing, b), -1);
    assert_int_equal(errno, ENOENT);
    errno = 0;
    assert_int_equal(link(missing, name_of("never")), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(stat(b, &after), 0);
    assert_true(after.st_ino == before.st_ino);
    assert_int_equal(unlink(a), 0);
    assert_int_equal(unlink(b), 0);
}

/* Renames and links outside /dev/shm are the case's own business: done,
   nothing ledgered, nothing reported. */
static void renames_and_links_elsewhere_are_not_ledgered(void **state)
{
    (void)state;
    char dir[] = "/tmp/mpf-evade-XXXXXX", a[64], b[64], c[64];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    close_new(open(a, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
    assert_int_equal(rename(a, b), 0);
    assert_int_equal(link(b, c), 0);
    assert_int_equal(unlink(b), 0);
    assert_int_equal(unlink(c), 0);
    assert_int_equal(rmdir(dir), 0);
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
        mpf_unit_test(renameat2_noreplace_is_ledgered, 5000),
        mpf_unit_test(linkat_of_an_unnamed_file_is_ledgered, 5000),
        mpf_unit_test(failed_renames_and_links_keep_their_errors, 5000),
        mpf_unit_test(renames_and_links_elsewhere_are_not_ledgered, 5000),
    };
    return mpf_run_group_tests(tests, NULL, group_teardown);
}
