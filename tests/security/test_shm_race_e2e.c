/* SPDX-License-Identifier: MIT */
/*
 * test_shm_race_e2e.c — the creation race through the whole fixture: a
 * guarded case opens a fixed /dev/shm name with O_CREAT and without
 * O_EXCL while a process outside the case (started by main() before the
 * group, as a parallel job would be; uid 65534 when run as root) creates
 * the same name. Released together by a futex gate (race_gate.h). If the
 * case created the object, it is the case's leak: named and removed
 * (mpf_expect). If the other process did, the case must pass with nothing
 * blamed, and the object must outlive the case: the next repetition
 * (MPF_REPEAT) and the group teardown check it is still there, same inode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>
#include "race_gate.h"

static struct race_gate *g;
static uint32_t try_no;
static char name[64], path[96];
static uint64_t foreign_ino; /* the other process's object, to outlive us */
static unsigned theirs_count;

/* The other process: creates the name with a raw O_EXCL open when the
   gate opens (no wrapper of libmpfixture sees it). */
static void racer(uid_t as)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    race_gate_pin(0);
    if (as && (setresgid(as, as, as) != 0 || setresuid(as, as, as) != 0))
        _exit(3);
    for (uint32_t t = 0; race_gate_racer_start(g, t); t++) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, path,
                              O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
        struct stat st;
        uint64_t ino = fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
        int err = fd >= 0 ? 0 : errno;
        if (fd >= 0)
            close(fd);
        race_gate_racer_done(g, t, ino, err);
    }
    _exit(0);
}

/* The object of the last try that the other process created is still
   there, as itself; then it is removed for the next try. */
static int foreign_survived(void)
{
    if (!foreign_ino)
        return 0;
    struct stat st;
    int rc = stat(path, &st) == 0 && (uint64_t)st.st_ino == foreign_ino ? 0
                                                                        : -1;
    if (rc)
        fprintf(stderr,
                "test_shm_race_e2e: the other process's %s was "
                "removed by the fixture\n",
                path);
    unlink(path);
    foreign_ino = 0;
    return rc;
}

static void o_creat_racing_another_process_blames_only_its_own(void **state)
{
    (void)state;
    assert_int_equal(foreign_survived(), 0);
    uint32_t t = try_no++;
    race_gate_open(g, t);
    int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    int err = errno;
    race_gate_finish(g, t);
    uint64_t theirs = atomic_load(&g->ino);
    if (theirs) {
        foreign_ino = theirs; /* not the case's: must outlive it */
        theirs_count++;
        /* Another owner's file may be refused to O_CREAT (root too:
           fs.protected_regular); never EEXIST. */
        assert_true(fd >= 0 || (err == EACCES && geteuid() == 0));
    } else {
        assert_true(fd >= 0);
        mpf_expect(MPF_SHM_LEAK, name); /* the case's own */
    }
    if (fd >= 0)
        close(fd);
}

static int group_teardown(void **state)
{
    (void)state;
    if (try_no % 100 == 0) /* MPF_REPEAT runs the teardown each round */
        fprintf(stderr,
                "test_shm_race_e2e: the other process created the object "
                "in %u of %u tries\n",
                theirs_count, try_no);
    return foreign_survived();
}

int main(void)
{
    snprintf(name, sizeof name, "mpf-race-e2e-%d", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED)
        return 1;
    memset(g, 0, sizeof *g);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        racer(geteuid() == 0 ? 65534 : 0);
    if (pid < 0)
        return 1;
    race_gate_pin(1); /* the cases' process inherits it */
    const struct CMUnitTest tests[] = {
        mpf_unit_test(o_creat_racing_another_process_blames_only_its_own, 5000),
    };
    int failed = mpf_run_group_tests(tests, NULL, group_teardown);
    race_gate_quit(g);
    int status;
    waitpid(pid, &status, 0);
    unlink(path);
    return failed;
}
