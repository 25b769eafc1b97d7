/* SPDX-License-Identifier: MIT */
/*
 * protocol_suite.c — eight guarded cmocka cases for the Bazel protocol's
 * tests (check_protocol.py sets Bazel's variables itself, no Bazel
 * needed). Every case prints "ran <name>" on stdout, so the driver counts
 * what each shard ran. One case leaves a /dev/shm object (shm_leak), the
 * rest pass; PROTOCOL_SUITE_EXIT=1 makes one case exit() mid-run (a
 * premature exit; PROTOCOL_SUITE_FAIL=1 and PROTOCOL_SUITE_SKIP=1 make it
 * fail an assertion or skip itself, PROTOCOL_SUITE_FAIL_MSG=<text> fail
 * saying the text; PROTOCOL_SUITE_FD_LEAK=1 makes the leaking case leave its
 * descriptor open too), PROTOCOL_SUITE_CHECK_PREMATURE=1 makes one assert that
 * TEST_PREMATURE_EXIT_FILE exists while the cases run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpfixture/cmocka.h>

static void ran(const char *name)
{
    printf("ran %s\n", name);
    fflush(stdout);
}

/* A case that only says it ran. */
#define PLAIN_CASE(name)           \
    static void name(void **state) \
    {                              \
        (void)state;               \
        ran(#name);                \
    }
PLAIN_CASE(case_one)
PLAIN_CASE(case_two)
PLAIN_CASE(case_four)
PLAIN_CASE(case_seven)
PLAIN_CASE(case_eight)

/* The variable `name` is "1". */
static int asked(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

static void leaks_shm_object(void **state)
{
    (void)state;
    ran("leaks_shm_object");
    char name[64];
    snprintf(name, sizeof name, "/mpf-bazel-leak-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    if (!asked("PROTOCOL_SUITE_FD_LEAK"))
        close(fd); /* left in /dev/shm: the guard's shm_leak */
}

static void premature_file_exists_while_running(void **state)
{
    (void)state;
    ran("premature_file_exists_while_running");
    const char *path = getenv("TEST_PREMATURE_EXIT_FILE");
    const char *check = getenv("PROTOCOL_SUITE_CHECK_PREMATURE");
    if (check && strcmp(check, "1") == 0)
        assert_int_equal(access(path ? path : "", F_OK), 0);
}

static void exits_mid_run_when_asked(void **state)
{
    (void)state;
    ran("exits_mid_run_when_asked");
    const char *v = getenv("PROTOCOL_SUITE_EXIT");
    if (v && strcmp(v, "1") == 0)
        exit(0);
    v = getenv("PROTOCOL_SUITE_FAIL"); /* a failed assertion, saying "<" */
    if (v && strcmp(v, "1") == 0)
        assert_true(2 < 1);
    v = getenv("PROTOCOL_SUITE_FAIL_MSG"); /* a failure, saying v */
    if (v)
        fail_msg("%s", v);
    v = getenv("PROTOCOL_SUITE_SKIP");
    if (v && strcmp(v, "1") == 0)
        skip();
}

/* PROTOCOL_SUITE_SETUP_FAIL=1: case_eight's setup fails (an error);
   PROTOCOL_SUITE_TEARDOWN_FAIL=1: its teardown returns nonzero (an error);
   PROTOCOL_SUITE_GROUP_FAIL=1: the group setup fails (no case runs). */
static int case_setup(void **state)
{
    (void)state;
    return asked("PROTOCOL_SUITE_SETUP_FAIL") ? -1 : 0;
}

static int case_teardown(void **state)
{
    (void)state;
    return asked("PROTOCOL_SUITE_TEARDOWN_FAIL") ? -1 : 0;
}

static int group_setup(void **state)
{
    (void)state;
    return asked("PROTOCOL_SUITE_GROUP_FAIL") ? -1 : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(case_one),
        cmocka_unit_test(case_two),
        cmocka_unit_test(leaks_shm_object),
        cmocka_unit_test(case_four),
        cmocka_unit_test(premature_file_exists_while_running),
        cmocka_unit_test(exits_mid_run_when_asked),
        cmocka_unit_test(case_seven),
        cmocka_unit_test_setup_teardown(case_eight, case_setup, case_teardown),
    };
    return mpf_run_group_tests(tests, group_setup, NULL);
}
