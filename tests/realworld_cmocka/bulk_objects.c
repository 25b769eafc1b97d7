/* SPDX-License-Identifier: MIT */
/*
 * bulk_objects.c — the suite of a message bus that puts one shared-memory
 * ring per connection in /dev/shm, written the way such suites are (no
 * mpfixture header): cases that open and close thousands of rings, a case
 * that leaves three of 3,000 behind (planted: passes under plain cmocka),
 * and a long soak case of about a second and a half. Guarded with
 * MPF_BUDGET_MS=1000 and MPF_BUDGETS='long_*=20000': the soak case gets
 * its own budget by name.
 */
/* As the project's own sources do (this corpus is others' code). */
/* NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static void ring_name(char *buf, size_t size, const char *what, int i)
{
    snprintf(buf, size, "/corpus-bus-%d-%s-%d", (int)getpid(), what, i);
}

static int ring_open(const char *name)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, 4096) != 0) {
        close(fd);
        shm_unlink(name);
        return -1;
    }
    return fd;
}

static void five_thousand_connections_come_and_go(void **state)
{
    (void)state;
    char name[96];
    for (int i = 0; i < 5000; i++) {
        ring_name(name, sizeof name, "conn", i);
        int fd = ring_open(name);
        assert_true(fd >= 0);
        close(fd);
    }
    for (int i = 0; i < 5000; i++) {
        ring_name(name, sizeof name, "conn", i);
        assert_int_equal(shm_unlink(name), 0);
    }
}

/* Planted: three rings of 3,000, among the oldest, never unlinked. */
static void three_of_three_thousand_rings_forgotten(void **state)
{
    (void)state;
    char name[96];
    for (int i = 0; i < 3000; i++) {
        ring_name(name, sizeof name, "lost", i);
        int fd = ring_open(name);
        assert_true(fd >= 0);
        close(fd);
    }
    for (int i = 3; i < 3000; i++) {
        ring_name(name, sizeof name, "lost", i);
        assert_int_equal(shm_unlink(name), 0);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A soak: traffic over one connection's ring for 1.5 s of wall time. */
static void long_soak_of_traffic(void **state)
{
    (void)state;
    char name[96];
    ring_name(name, sizeof name, "soak", 0);
    int fd = ring_open(name);
    assert_true(fd >= 0);
    unsigned long messages = 0;
    for (double end = now_s() + 1.5; now_s() < end; messages++) {
        char *ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                          0);
        assert_true(ring != MAP_FAILED);
        ring[messages % 4096] = (char)messages;
        assert_int_equal(munmap(ring, 4096), 0);
    }
    assert_true(messages > 0);
    close(fd);
    assert_int_equal(shm_unlink(name), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(five_thousand_connections_come_and_go),
        cmocka_unit_test(three_of_three_thousand_rings_forgotten),
        cmocka_unit_test(long_soak_of_traffic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
