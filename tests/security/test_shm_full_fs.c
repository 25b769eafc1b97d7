/* SPDX-License-Identifier: MIT */
/*
 * test_shm_full_fs.c — a full /dev/shm under a supervised runner's page.
 *
 *   on_small_shm.sh test_shm_full_fs [nearly]
 *                                      (a small tmpfs on /dev/shm: root)
 *
 * A runner's page file gets its pages but its head as they are first
 * written (fixture/src/ledger/lazy_pages.c). A case that fills /dev/shm and
 * then makes more objects than the ledger names, and forks, must not bring
 * a SIGBUS on any process of the guard: the identities there was no room
 * for are counted unchecked, the other records (names, forks) as
 * unrecorded, and the case fails closed, naming both. The next case, once
 * the guard removed what filled /dev/shm, passes. With `nearly`: a case
 * that leaves room for only the pages its records first reach has every
 * record written, and passes.
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
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

#define FILLER "/dev/shm/mpf-full-filler"
#define OBJECTS 600 /* beyond the ledger's 256 named slots */
#define FORKS 600   /* 16 bytes a record: more than a page of the ring */

static void make_and_remove_objects(void)
{
    char name[64];
    for (int i = 0; i < OBJECTS; i++) {
        snprintf(name, sizeof name, "/mpf-full-%d", i);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    for (int i = 0; i < OBJECTS; i++) {
        snprintf(name, sizeof name, "/mpf-full-%d", i);
        assert_int_equal(shm_unlink(name), 0);
    }
}

/* n children that end at once, each waited for: only their records are
   left to write. */
static void fork_and_wait(int n)
{
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

/* Fills /dev/shm to its last block with FILLER; returns its descriptor
   and, in *size, its size. */
static int fill_dev_shm(off_t *size)
{
    int fd = open(FILLER, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    off_t at = 0;
    while (posix_fallocate(fd, at, 4096) == 0)
        at += 4096;
    *size = at;
    return fd;
}

/* Fills /dev/shm to its last block, then makes its objects (an empty one
   needs no block) and removes them, forks, and leaves the filler:
   /dev/shm is still full when the case's end reads what it recorded. The
   identities there was no room for are unchecked, the names and forks
   unrecorded; the filler is its leak, removed. */
static void fills_dev_shm_then_makes_objects(void **state)
{
    (void)state;
    off_t size;
    close(fill_dev_shm(&size));
    make_and_remove_objects();
    fork_and_wait(FORKS);
}

static void with_room_again_passes(void **state)
{
    (void)state;
    make_and_remove_objects();
    fork_and_wait(FORKS);
}

/* Fills /dev/shm, then gives back ROOM_PAGES: room for the pages the
   case's records first reach (the fork ring's, and those of a creation's
   two rings), with little to spare. Every record must be written: each
   ring takes only the page it writes (lazy_pages.c); one that took pages
   ahead of its writes would take the room the others need, and the case
   would fail as blinded. Its own group, so that every ring of its
   runner's page starts on a page not had yet. */
#define ROOM_PAGES 4

static void nearly_full_dev_shm_still_takes_every_record(void **state)
{
    (void)state;
    off_t size;
    int fd = fill_dev_shm(&size);
    assert_true(size >= ROOM_PAGES * 4096);
    assert_int_equal(ftruncate(fd, size - ROOM_PAGES * 4096), 0);
    close(fd);
    int obj = shm_open("/mpf-nearly-full", O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(obj >= 0);
    close(obj);
    assert_int_equal(shm_unlink("/mpf-nearly-full"), 0);
    fork_and_wait(10);
    assert_int_equal(unlink(FILLER), 0);
}

/* `test_shm_full_fs nearly`: the nearly full case alone. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "nearly") == 0) {
        const struct CMUnitTest nearly[] = {
            cmocka_unit_test(nearly_full_dev_shm_still_takes_every_record),
        };
        return mpf_run_group_tests(nearly, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fills_dev_shm_then_makes_objects),
        cmocka_unit_test(with_room_again_passes),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
