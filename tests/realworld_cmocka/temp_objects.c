/* SPDX-License-Identifier: MIT */
/*
 * temp_objects.c — a cmocka suite of an IPC library (no mpfixture header)
 * that makes each connection's directory under /dev/shm with mkdtemp() and
 * its socket-like file inside with mkstemp(), and serves a connection in
 * a forked child that ends with exit(0), as servers do. Connections closed
 * in the case leave nothing; the server child is no escape, and its
 * parent sees its own exit status. Two planted offences: a connection
 * never closed (its mkdtemp directory and mkstemp file) and a mkstemp
 * file of its own left in /dev/shm.
 */
/* As the project's own sources do (this corpus is others' code). */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

struct conn {
    char dir[64];
    char file[96];
};

static int conn_open(struct conn *c)
{
    snprintf(c->dir, sizeof c->dir, "/dev/shm/corpus-conn-XXXXXX");
    if (!mkdtemp(c->dir))
        return -1;
    snprintf(c->file, sizeof c->file, "%s/sock-XXXXXX", c->dir);
    int fd = mkstemp(c->file);
    if (fd < 0)
        return -1;
    return close(fd);
}

static int conn_close(struct conn *c)
{
    return unlink(c->file) == 0 && rmdir(c->dir) == 0 ? 0 : -1;
}

/* The server's side: serve, then end the process as servers do. */
static void serve_then_exit(int out)
{
    int ok = write(out, "served", 6) == 6;
    exit(ok ? 0 : 3);
}

static void connection_closed_in_the_case_leaves_nothing(void **state)
{
    (void)state;
    struct conn c;
    assert_int_equal(conn_open(&c), 0);
    assert_int_equal(conn_close(&c), 0);
}

static void server_child_ends_with_exit(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        serve_then_exit(p[1]);
    }
    close(p[1]);
    char buf[8] = { 0 };
    assert_int_equal(read(p[0], buf, sizeof buf - 1), 6);
    close(p[0]);
    int status = -1;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Planted: a connection never closed. */
static void connection_left_open(void **state)
{
    (void)state;
    struct conn c;
    assert_int_equal(conn_open(&c), 0);
}

/* Planted: a mkstemp() file of its own, left in /dev/shm. */
static void temporary_file_left(void **state)
{
    (void)state;
    char path[] = "/dev/shm/corpus-tmp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(connection_closed_in_the_case_leaves_nothing),
        cmocka_unit_test(server_child_ends_with_exit),
        cmocka_unit_test(connection_left_open),
        cmocka_unit_test(temporary_file_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
