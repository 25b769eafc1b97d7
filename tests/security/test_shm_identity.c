/* SPDX-License-Identifier: MIT */
/*
 * test_shm_identity.c — what the fixture may delete: only the /dev/shm
 * object the case created, under its whole name, directly in /dev/shm.
 *
 * Each case commits what a careless or hostile subject would, and main()
 * then proves that every object the fixture must not touch is still there
 * (same inode), and removes it. A case passes only if the report says what
 * it must (mpf_expect) and the group teardown finds nothing deleted that
 * was not the case's own (the cases run in a supervised child, so the check
 * runs there too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

/* Objects the fixture must leave alone, checked by the group teardown. */
struct keep {
    char path[512];
    ino_t ino;
};
static struct keep keep[8];
static int n_keep;

/* Create a file by a raw syscall: no interposer sees it, so the fixture
   learns of it only as "another program's" object. */
static int create_unseen(const char *path, ino_t *ino)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path,
                          O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : -errno;
    if (ino)
        *ino = st.st_ino;
    close(fd);
    return rc;
}

static void must_survive(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(n_keep < (int)(sizeof keep / sizeof keep[0]));
    snprintf(keep[n_keep].path, sizeof keep[n_keep].path, "%s", path);
    keep[n_keep++].ino = st.st_ino;
}

/* A name of `len` characters, unique to this process. */
static const char *long_name(size_t len)
{
    static char name[256];
    int n = snprintf(name, sizeof name, "mpf-sec-%d-", (int)getpid());
    for (size_t i = (size_t)n; i < len && i < sizeof name - 1; i++)
        name[i] = (char)('a' + i % 26);
    name[len < sizeof name ? len : sizeof name - 1] = '\0';
    return name;
}

/* open("/dev/shm/../../DIR/victim", O_CREAT): the ledger holds a name that
   leads out of /dev/shm. Reported, never removed. */
static void path_out_of_dev_shm_is_reported_not_removed(void **state)
{
    (void)state;
    static char dir[64], victim[128], via[256];
    snprintf(dir, sizeof dir, "/tmp/mpf-sec-%d-XXXXXX", (int)getpid());
    assert_non_null(mkdtemp(dir));
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(via, sizeof via, "/dev/shm/../..%s", victim);
    int fd = open(via, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "keep\n", 5), 5);
    close(fd);
    must_survive(victim);
    mpf_expect(MPF_SHM_LEAK, "not removed: its path leads out of /dev/shm");
}

/* The same under a keep list whose pattern matches "..": a path out of
   /dev/shm is no entry of it, never kept. */
static void path_out_of_dev_shm_is_never_kept(void **state)
{
    assert_int_equal(mpf_keep_shm(".?"), 0);
    path_out_of_dev_shm_is_reported_not_removed(state);
}

/* A directory the case made under /dev/shm holds a symlink out of it, and
   a file is created through the link: reported, never removed (no
   component of a path is followed when the fixture removes), and what the
   case made under /dev/shm itself is removed. */
static void symlink_in_a_case_directory_is_not_followed(void **state)
{
    (void)state;
    static char out[64], dir[128], link_path[160], via[200], victim[128];
    snprintf(out, sizeof out, "/tmp/mpf-sec-link-%d-XXXXXX", (int)getpid());
    assert_non_null(mkdtemp(out));
    snprintf(dir, sizeof dir, "/dev/shm/mpf-sec-link-%d", (int)getpid());
    snprintf(link_path, sizeof link_path, "%s/out", dir);
    snprintf(via, sizeof via, "%s/victim", link_path);
    snprintf(victim, sizeof victim, "%s/victim", out);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(symlink(out, link_path), 0);
    int fd = open(via, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    must_survive(victim);
    /* Links after objects: the file made through the link is judged while the
       link still stands, and left; then the link itself (symlink()'s own
       object, never its target) and the directory, empty by then. */
    mpf_expect(MPF_SHM_LEAK, "out/victim");
    mpf_expect(MPF_SHM_LEAK, "not removed: its path leads out of /dev/shm");
    mpf_expect(MPF_SHM_LEAK, "via symlink; unlinked");
    mpf_expect(MPF_SHM_LEAK, "via mkdir; unlinked");
}

/* The case creates and removes its object; another owner's object then
   takes the name. It is not the case's: left in place, and the case is
   not blamed (a warning says what happened). */
static void name_taken_over_by_another_object_is_left(void **state)
{
    (void)state;
    const char *name = long_name(40);
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
    assert_int_equal(create_unseen(path, NULL), 0);
    if (geteuid() == 0) /* as another user's would be */
        assert_int_equal(chown(path, 65534, 65534), 0);
    must_survive(path);
}

/* The same, by an object of the case's own owner: the inode alone tells
   it from the case's (the test above changes the owner as well as root,
   so it cannot tell which comparison left the object). */
static void name_taken_over_by_the_same_owner_is_left(void **state)
{
    (void)state;
    const char *name = long_name(41);
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
    assert_int_equal(create_unseen(path, NULL), 0);
    must_survive(path);
}

/* The case's own object, given to another user by a raw system call
   (root only): no wrapper sees the chown, and the owner alone tells it
   from what the case created, so it is left. */
static void object_given_to_another_owner_is_left(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "needs root: only root can give an object away\n");
        skip();
    }
    const char *name = long_name(42);
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(syscall(SYS_fchown, fd, 65534, 65534), 0);
    close(fd);
    must_survive(path);
}

/* The case's own objects, given to another user through chown() and
   fchown() (root only): a chown by the case does not make them someone
   else's. Both are its leaks, and removed. */
static void objects_the_case_gives_away_stay_its_leaks(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "needs root: only root can give an object away\n");
        skip();
    }
    const char *name = long_name(44);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fchown(fd, 65534, 65534), 0);
    close(fd);
    char dir[300];
    snprintf(dir, sizeof dir, "/dev/shm/%s.d", name);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chown(dir, 65534, 65534), 0);
    mpf_expect(MPF_SHM_LEAK, name);
    mpf_expect(MPF_SHM_LEAK, "via mkdir; unlinked");
    mpf_expect(MPF_SHM_LEAK, "via shm_open; unlinked");
}

/* A 200-character name is named whole and removed. */
static void long_name_leak_is_named_whole_and_removed(void **state)
{
    (void)state;
    const char *name = long_name(200);
    assert_int_equal(strlen(name), 200);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    mpf_expect(MPF_SHM_LEAK, name);
}

/* A 200-character name created and removed: an object named by its first
   95 characters, which predates the case, is not the case's. */
static void long_name_removed_leaves_its_prefix_alone(void **state)
{
    (void)state;
    const char *name = long_name(200);
    /* The prefix object was made by main(), before the case. */
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
    /* main() checks that the prefix object is still there, same inode. */
}

/* Every object that must survive did, as the same inode. */
static int check_kept(void **state)
{
    (void)state;
    int bad = 0;
    for (int i = 0; i < n_keep; i++) {
        struct stat st;
        if (stat(keep[i].path, &st) != 0 || st.st_ino != keep[i].ino) {
            fprintf(stderr,
                    "test_shm_identity: %s was deleted or replaced "
                    "by the fixture\n",
                    keep[i].path);
            bad++;
        }
        unlink(keep[i].path);
        char *slash = strrchr(keep[i].path, '/');
        if (strncmp(keep[i].path, "/tmp/", 5) == 0 && slash) {
            *slash = '\0';
            rmdir(keep[i].path);
        }
    }
    n_keep = 0;
    return bad ? -1 : 0;
}

int main(void)
{
    char prefix_path[300];
    ino_t prefix_ino = 0;
    snprintf(prefix_path, sizeof prefix_path, "/dev/shm/%.95s", long_name(200));
    if (create_unseen(prefix_path, &prefix_ino) != 0) {
        perror("test_shm_identity: creating the prefix object");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        mpf_unit_test(path_out_of_dev_shm_is_reported_not_removed, 5000),
        mpf_unit_test(path_out_of_dev_shm_is_never_kept, 5000),
        mpf_unit_test(symlink_in_a_case_directory_is_not_followed, 5000),
        mpf_unit_test(name_taken_over_by_another_object_is_left, 5000),
        mpf_unit_test(name_taken_over_by_the_same_owner_is_left, 5000),
        mpf_unit_test(object_given_to_another_owner_is_left, 5000),
        mpf_unit_test(objects_the_case_gives_away_stay_its_leaks, 5000),
        mpf_unit_test(long_name_leak_is_named_whole_and_removed, 5000),
        mpf_unit_test(long_name_removed_leaves_its_prefix_alone, 5000),
    };
    int failed = mpf_run_group_tests(tests, NULL, check_kept);
    int bad = 0;
    /* The prefix object belongs to main(): it must outlive every case. */
    struct stat st;
    if (stat(prefix_path, &st) != 0 || st.st_ino != prefix_ino) {
        fprintf(stderr, "test_shm_identity: %s was deleted by the fixture\n",
                prefix_path);
        bad++;
    }
    unlink(prefix_path);
    shm_unlink(long_name(200)); /* in case the fixture failed to */
    return failed || bad ? 1 : 0;
}
