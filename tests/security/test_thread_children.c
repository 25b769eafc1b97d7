/* SPDX-License-Identifier: MIT */
/*
 * test_thread_children.c — a child forked by a second thread of the test
 * process, the thread still alive at case end: the child is in that
 * thread's children file only (/proc/<pid>/task/<tid>/children), so a
 * census of the main thread's file misses it. The case must fail naming
 * it as a survivor (mpf_expect), and it is killed. The thread ends in the
 * group teardown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

static sem_t forked, release;
static pthread_t thread;
static bool thread_started;
static pid_t kid;

static void *fork_and_wait(void *arg)
{
    (void)arg;
    kid = fork();
    if (kid == 0)
        for (;;)
            pause();
    sem_post(&forked);
    while (sem_wait(&release) != 0)
        ;
    return NULL;
}

static void child_of_a_live_second_thread_is_a_survivor(void **state)
{
    (void)state;
    assert_int_equal(pthread_create(&thread, NULL, fork_and_wait, NULL), 0);
    thread_started = true;
    while (sem_wait(&forked) != 0)
        ;
    assert_true(kid > 0);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)kid);
    mpf_expect(MPF_SURVIVOR, pid); /* the only survivor: named by pid */
}

static int group_setup(void **state)
{
    (void)state;
    return sem_init(&forked, 0, 0) || sem_init(&release, 0, 0);
}

static int end_the_thread(void **state)
{
    (void)state;
    if (thread_started) {
        sem_post(&release);
        pthread_join(thread, NULL);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(child_of_a_live_second_thread_is_a_survivor, 5000),
    };
    return mpf_run_group_tests(tests, group_setup, end_the_thread);
}
