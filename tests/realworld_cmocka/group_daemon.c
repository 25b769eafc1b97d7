/* SPDX-License-Identifier: MIT */
/*
 * group_daemon.c — a cmocka suite whose group setup starts a daemon (no
 * mpfixture header): the daemon rewrites its state file in /dev/shm by
 * temp + rename every 2 ms on its own clock, and makes one /dev/shm
 * object per job the cases submit. Its state and its jobs' objects are
 * the daemon's while it runs (present after each case), and the group
 * teardown stops it, which removes them. One planted offence: a case that
 * itself makes what the daemon would make, and leaves it.
 */
/* As the project's own sources do (this corpus is others' code). */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char prefix[64]; /* /dev/shm/corpus-dmn-<pid>- */
static int to_daemon = -1, from_daemon = -1;
static pid_t daemon_pid = -1;

static void path_of(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "%s%s", prefix, what);
}

static void write_state(unsigned n)
{
    char tmp[96], state[96], text[32];
    path_of(tmp, sizeof tmp, "state.tmp");
    path_of(state, sizeof state, "state");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        _exit(2);
    int len = snprintf(text, sizeof text, "%u\n", n);
    if (write(fd, text, (size_t)len) != len || close(fd) != 0 ||
        rename(tmp, state) != 0)
        _exit(2);
}

/* The daemon: its state every 2 ms, a shm object per job ("j" on the
   pipe, answered once made), everything removed when the pipe closes. */
static void run_daemon(int in, int out)
{
    unsigned ticks = 0, jobs = 0;
    write_state(ticks);
    if (write(out, "r", 1) != 1) /* ready: the state exists */
        _exit(2);
    for (;;) {
        struct pollfd p = { .fd = in, .events = POLLIN };
        int n = poll(&p, 1, 2);
        if (n == 0) {
            write_state(++ticks);
            continue;
        }
        char c;
        if (n < 0 || read(in, &c, 1) != 1)
            break;
        char name[64];
        snprintf(name, sizeof name, "%sjob-%u", prefix + strlen("/dev/shm"),
                 jobs++);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || close(fd) != 0 || write(out, "d", 1) != 1)
            _exit(2);
    }
    /* Everything it made is still there for it to remove: a daemon whose
       state vanished under it fails (the group teardown says so). */
    char path[96];
    path_of(path, sizeof path, "state");
    int lost = unlink(path) != 0;
    for (unsigned j = 0; j < jobs; j++) {
        char name[64];
        snprintf(name, sizeof name, "%sjob-%u", prefix + strlen("/dev/shm"), j);
        lost |= shm_unlink(name) != 0;
    }
    _exit(lost ? 3 : 0);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(prefix, sizeof prefix, "/dev/shm/corpus-dmn-%d-", (int)getpid());
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
        return -1;
    daemon_pid = fork();
    if (daemon_pid < 0)
        return -1;
    if (daemon_pid == 0) {
        close(down[1]);
        close(up[0]);
        run_daemon(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    to_daemon = down[1];
    from_daemon = up[0];
    char c;
    return read(from_daemon, &c, 1) == 1 && c == 'r' ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    close(to_daemon); /* the daemon cleans up and exits */
    int status = -1;
    waitpid(daemon_pid, &status, 0);
    close(from_daemon);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static bool exists(const char *what)
{
    char path[96];
    struct stat st;
    path_of(path, sizeof path, what);
    return stat(path, &st) == 0;
}

static void submit_job(void)
{
    char c;
    assert_int_equal(write(to_daemon, "j", 1), 1);
    assert_int_equal(read(from_daemon, &c, 1), 1);
    assert_int_equal(c, 'd');
}

static void daemon_state_is_there(void **state)
{
    (void)state;
    assert_true(exists("state"));
}

static void submits_a_job(void **state)
{
    (void)state;
    submit_job();
    assert_true(exists("job-0"));
}

static void job_of_the_last_case_is_still_there(void **state)
{
    (void)state;
    submit_job();
    assert_true(exists("job-0") && exists("job-1") && exists("state"));
}

/* Planted: the case makes what the daemon would make, and leaves it. */
static void leaks_what_the_daemon_would_make(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "%sjob-own", prefix + strlen("/dev/shm"));
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
}

static void daemon_state_is_there_again(void **state)
{
    (void)state;
    assert_true(exists("state"));
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(daemon_state_is_there),
        cmocka_unit_test(submits_a_job),
        cmocka_unit_test(job_of_the_last_case_is_still_there),
        cmocka_unit_test(leaks_what_the_daemon_would_make),
        cmocka_unit_test(daemon_state_is_there_again),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
