/* SPDX-License-Identifier: MIT */
/*
 * test_preexisting.c — what the fixture may kill or close: nothing that
 * predates the case, however much of it there is.
 *
 * The group setup starts 2,000 children (each blocked reading a pipe) and
 * opens 2,000 descriptors before any case. A case that leaves nothing
 * must pass; a case that leaves one child must be blamed for exactly that
 * child. The group teardown proves every child is still alive and every
 * descriptor still open, then ends them by closing the pipe and reaps
 * them (children that lose their parent see end-of-file and exit too).
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

#define N_CHILDREN 2000
#define N_FDS 2000

static pid_t children[N_CHILDREN];
static int n_children;
static int fds[N_FDS];
static int n_fds;
static int gate[2] = { -1, -1 }; /* children block on gate[0] */

static int start_children(void)
{
    if (pipe2(gate, O_CLOEXEC) != 0)
        return -1;
    for (n_children = 0; n_children < N_CHILDREN; n_children++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            char c;
            close(gate[1]);
            while (read(gate[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit(0);
        }
        children[n_children] = pid;
    }
    return 0;
}

static int open_descriptors(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    rlim_t need = N_FDS + 256;
    if (rl.rlim_cur < need) {
        rl.rlim_cur = need;
        if (rl.rlim_max < need)
            rl.rlim_max = need; /* root may raise it */
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            perror("test_preexisting: RLIMIT_NOFILE");
            return -1;
        }
    }
    for (n_fds = 0; n_fds < N_FDS; n_fds++)
        if ((fds[n_fds] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    if (open_descriptors() != 0 || start_children() != 0) {
        perror("test_preexisting: setup");
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    int bad = 0;
    for (int i = 0; i < n_fds; i++)
        if (fcntl(fds[i], F_GETFD) < 0) {
            fprintf(stderr, "test_preexisting: descriptor %d was closed\n",
                    fds[i]);
            bad++;
        } else {
            close(fds[i]);
        }
    /* None may have exited yet: a death would be a signal from the
       fixture (they only leave when the gate closes). */
    siginfo_t si;
    for (int i = 0; i < n_children; i++) {
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)children[i], &si,
                   WEXITED | WNOHANG | WNOWAIT) != 0 ||
            si.si_pid != 0) {
            fprintf(stderr,
                    "test_preexisting: child %d that predates the "
                    "case was killed or is gone\n",
                    (int)children[i]);
            bad++;
        }
    }
    close(gate[1]);
    close(gate[0]);
    for (int i = 0; i < n_children; i++)
        while (waitpid(children[i], NULL, 0) < 0 && errno == EINTR)
            ;
    return bad ? -1 : 0;
}

static void empty_case_blames_nothing_that_predates_it(void **state)
{
    (void)state;
    /* Any offence reported here fails the case: nothing is expected. */
}

static void one_new_child_is_the_only_offender(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(gate[1]); /* a missed child must not hold the others */
        for (;;)
            pause();
    }
    char text[16];
    snprintf(text, sizeof text, "%d", (int)pid);
    mpf_expect(MPF_SURVIVOR, text); /* and nothing else */
}

static void one_new_descriptor_is_the_only_offender(void **state)
{
    (void)state;
    int fd = open("/dev/zero", O_RDONLY); /* left open on purpose */
    assert_true(fd >= 0);
    mpf_expect(MPF_FD_LEAK, "/dev/zero");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(empty_case_blames_nothing_that_predates_it, 10000),
        mpf_unit_test(one_new_child_is_the_only_offender, 10000),
        mpf_unit_test(one_new_descriptor_is_the_only_offender, 10000),
    };
    return mpf_run_group_tests(tests, group_setup, group_teardown);
}
