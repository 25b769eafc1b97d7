/* SPDX-License-Identifier: MIT */
/*
 * datastore.c — the suite of a datastore library that keeps its state in
 * /dev/shm on purpose, written the way such suites are (no mpfixture
 * header): the library creates its main shared memory lazily, on the
 * first connect of the first case, and keeps it for every later
 * connection and every later run; a connection starts a background
 * thread; the first connect also starts the library's journal thread,
 * which lives as long as the process and opens and closes a descriptor
 * every millisecond, whichever case runs (its descriptors are never the
 * case's); configuration is written as a temporary file renamed into
 * place. Guarded with MPF_KEEP_SHM='corpus-ds-main*', the kept state
 * survives every case and the run, and a session object a case forgets
 * still fails it.
 */
/* As the project's own sources do (this corpus is others' code). */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define MAIN_SHM "/corpus-ds-main"
#define MAIN_CFG "/dev/shm/corpus-ds-main.cfg"

/* ---- the library under test ---------------------------------------- */

struct ds_main {
    uint32_t magic;
    uint32_t connections;
};

struct ds_conn {
    struct ds_main *main;
    pthread_t notifier;
    int wake[2];
};

static void *notifier(void *arg)
{
    struct ds_conn *c = arg;
    char byte;
    ssize_t n;
    do /* waits for the connection to close */
        n = read(c->wake[0], &byte, 1);
    while (n < 0 && errno == EINTR);
    return NULL;
}

/* The library's journal thread: started once, never stopped, touching
   the journal (here /dev/null) every millisecond with a transient
   descriptor, and checking that what it opened is what it reads. */
static void *journal(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))
            abort(); /* a descriptor closed or replaced under the thread */
        close(fd);
        struct timespec period = { 0, 1000000 };
        nanosleep(&period, NULL);
    }
    return NULL;
}

static void start_journal(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, journal, NULL) == 0)
        pthread_detach(t);
}

/* Opens the main shared memory, creating it on first use (and keeping it:
   every later connection, in this run or the next, attaches to it). */
static struct ds_conn *ds_connect(void)
{
    static pthread_once_t journal_once = PTHREAD_ONCE_INIT;
    pthread_once(&journal_once, start_journal);
    int fd = shm_open(MAIN_SHM, O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 ||
        (st.st_size == 0 && ftruncate(fd, sizeof(struct ds_main)) != 0)) {
        close(fd);
        return NULL;
    }
    struct ds_main *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE,
                             MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    m->magic = 0x64730001;
    m->connections++;
    struct ds_conn *c = calloc(1, sizeof *c);
    if (!c || pipe(c->wake) != 0 ||
        pthread_create(&c->notifier, NULL, notifier, c) != 0) {
        munmap(m, sizeof *m);
        free(c);
        return NULL;
    }
    c->main = m;
    return c;
}

static void ds_disconnect(struct ds_conn *c)
{
    close(c->wake[1]); /* the notifier reads EOF and returns */
    pthread_join(c->notifier, NULL);
    close(c->wake[0]);
    c->main->connections--;
    munmap(c->main, sizeof *c->main);
    free(c);
}

/* Writes the configuration: a temporary file, renamed into place. */
static int ds_save_config(const char *text)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", MAIN_CFG, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    if (n != (ssize_t)strlen(text) || rename(tmp, MAIN_CFG) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- its tests ------------------------------------------------------ */

static void first_connect_creates_the_datastore(void **state)
{
    (void)state;
    struct ds_conn *c = ds_connect();
    assert_non_null(c);
    assert_int_equal(c->main->magic, 0x64730001);
    ds_disconnect(c);
}

static void later_connect_finds_it(void **state)
{
    (void)state;
    struct ds_conn *a = ds_connect();
    struct ds_conn *b = ds_connect();
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(b->main->connections, a->main->connections);
    assert_true(a->main->connections >= 2);
    ds_disconnect(b);
    ds_disconnect(a);
}

static void config_is_saved_atomically(void **state)
{
    (void)state;
    assert_int_equal(ds_save_config("mode=fast\n"), 0);
    assert_int_equal(ds_save_config("mode=safe\n"), 0);
    char buf[32] = { 0 };
    int fd = open(MAIN_CFG, O_RDONLY);
    assert_true(fd >= 0);
    assert_true(read(fd, buf, sizeof buf - 1) > 0);
    close(fd);
    assert_string_equal(buf, "mode=safe\n");
}

/* Planted: a session object nobody removes (passes under plain cmocka). */
static void forgets_a_session_object(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "/corpus-ds-session-%d", (int)getpid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_connect_creates_the_datastore),
        cmocka_unit_test(later_connect_finds_it),
        cmocka_unit_test(config_is_saved_atomically),
        cmocka_unit_test(forgets_a_session_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
