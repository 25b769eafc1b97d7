/* SPDX-License-Identifier: MIT */
/*
 * test_mailbox_atomics.c — port of simpler's test_mailbox_atomics.py
 * (simpler-lifecycle.md §3.6) onto libworker's mailbox (runtime/src/
 * mailbox.h, an internal header: the wire format is what is under test).
 *
 * Adapted or dropped, one line each:
 * - roundtrip/negative/offset test Python bindings on absolute addresses;
 *   here they test the acquire/release helpers on the mailbox's own words.
 * - the import-time wire-constant guard (#1765) becomes compile-time
 *   _Static_asserts in mailbox.h plus a case pinning the values and offsets.
 * - l3_sub_roundtrip needs run() (runtime part 2, issue 4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <mpfixture/mpfixture.h>
#include "internal.h"
#include "rt_helpers.h"

#define PAYLOAD 0xDEADBEEFCAFEBABEull

struct mb_fixture {
    char name[96];
    worker__mailbox *mb;
};

static void mb_open(struct mb_fixture *f)
{
    snprintf(f->name, sizeof(f->name), "/wk-%d-test-mailbox", (int)getpid());
    assert_int_equal(worker__mailbox_create(f->name, &f->mb), 0);
    assert_true(worker__mailbox_check(f->mb));
}

static void mb_close(struct mb_fixture *f)
{
    worker__mailbox_unmap(f->mb);
    assert_int_equal(shm_unlink(f->name), 0);
}

/* Reap a child, waiting for it with a bound; returns its wait status. */
static int reap(pid_t pid)
{
    siginfo_t si;

    assert_int_equal(rt_await_exit(pid, (int)(rt_bound_s(2.0) * 1000)), 0);
    memset(&si, 0, sizeof(si));
    assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
    return si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
}

/* A deadline `plain_s` from now, scaled with the build. */
static int64_t deadline_in(double plain_s)
{
    return worker__now_ns() + (int64_t)(rt_bound_s(plain_s) * 1e9);
}

static void roundtrip(void **state)
{
    struct mb_fixture f;

    mb_open(&f);
    for (uint32_t v = 0; v < 8; v++) {
        worker__mb_store(&f.mb->frame[0].state, v);
        assert_int_equal(worker__mb_load(&f.mb->frame[0].state), v);
    }
    mb_close(&f);
}

static void negative(void **state)
{
    struct mb_fixture f;

    mb_open(&f);
    worker__mb_write_error(&f.mb->frame[0], -7, "negative code");
    assert_int_equal(f.mb->frame[0].error, -7);
    assert_string_equal(f.mb->frame[0].msg, "negative code");
    mb_close(&f);
}

static void offset(void **state)
{
    struct mb_fixture f;

    mb_open(&f);
    /* The words of a task slot are independent of frame 0's. */
    worker__mb_store(&f.mb->slot[0].state, WORKER__MB_TASK_READY);
    worker__mb_store(&f.mb->frame[0].state, WORKER__MB_IDLE);
    assert_int_equal(worker__mb_load(&f.mb->slot[0].state),
                     WORKER__MB_TASK_READY);
    assert_int_equal((char *)&f.mb->slot[0].state - (char *)f.mb,
                     WORKER__MB_FRAME_SIZE);
    /* Task number seq lives in slot (seq - 1) % slots. */
    assert_ptr_equal(worker__mb_slot_of(f.mb, 1), &f.mb->slot[0]);
    assert_ptr_equal(worker__mb_slot_of(f.mb, WORKER__MB_TASK_SLOTS + 2),
                     &f.mb->slot[1]);
    mb_close(&f);
}

static void every_declared_state_matches_the_wire_values(void **state)
{
    assert_int_equal(WORKER__MB_IDLE, 0);
    assert_int_equal(WORKER__MB_TASK_READY, 1);
    assert_int_equal(WORKER__MB_TASK_DONE, 2);
    assert_int_equal(WORKER__MB_SHUTDOWN, 3);
    assert_int_equal(WORKER__MB_CONTROL_REQUEST, 4);
    assert_int_equal(WORKER__MB_CONTROL_DONE, 5);
    assert_int_equal(WORKER__MB_INIT_READY, 6);
    assert_int_equal(WORKER__MB_INIT_FAILED, 7);
    assert_int_equal(WORKER__MB_TASK_FAILED, 10);
    /* The layout is the format: offsets are part of the contract. */
    assert_int_equal(offsetof(worker__mb_frame, magic), 0);
    assert_int_equal(offsetof(worker__mb_frame, version), 4);
    assert_int_equal(offsetof(worker__mb_frame, state), 8);
    assert_int_equal(offsetof(worker__mb_frame, error), 12);
    assert_int_equal(offsetof(worker__mb_frame, subcmd), 16);
    assert_int_equal(offsetof(worker__mb_frame, depth), 24);
    assert_int_equal(offsetof(worker__mb_frame, shutdown), 32);
    assert_int_equal(offsetof(worker__mb_frame, bell), 36);
    assert_int_equal(offsetof(worker__mb_frame, fault), 40);
    assert_int_equal(offsetof(worker__mb_frame, parked), 44);
    assert_int_equal(offsetof(worker__mb_frame, close_by_ns), 48);
    assert_int_equal(offsetof(worker__mb_frame, listen), 56);
    assert_int_equal(offsetof(worker__mb_frame, args), 64);
    assert_int_equal(offsetof(worker__mb_frame, msg), 3840);
    /* The base frame, a ring of 32 slots of 512 bytes, a 4 KiB blob
       area: six pages. */
    assert_int_equal(WORKER__MB_TASK_SLOTS, 32);
    assert_int_equal(offsetof(worker__mailbox, slot), 4096);
    assert_int_equal(offsetof(worker__mailbox, blobs), 4096 + 32 * 512);
    assert_int_equal(sizeof(worker__mailbox), 6 * 4096);
    assert_int_equal(WORKER__MB_LISTEN_OFF, 0);
    assert_int_equal(WORKER__MB_LISTEN_BATCH, 1);
    assert_int_equal(WORKER__MB_LISTEN_EACH, 2);
    assert_int_equal(WORKER__MB_LISTEN_WAITERS, 4);
}

/* Version 2 (runtime part 2) gave frame 0's args area two overlays, the
   task's and the control command's; since version 6 a task has a slot of
   its own in the ring and its blob a place in the blob area; version 7
   added listen's WAITERS flag. */
static void task_and_control_overlays_are_pinned(void **state)
{
    assert_int_equal(WORKER__MB_VERSION, 7);
    assert_int_equal(offsetof(worker__mb_slot, state), 0);
    assert_int_equal(offsetof(worker__mb_slot, error), 4);
    assert_int_equal(offsetof(worker__mb_slot, callable), 8);
    assert_int_equal(offsetof(worker__mb_slot, seq), 16);
    assert_int_equal(offsetof(worker__mb_slot, done_seq), 24);
    assert_int_equal(offsetof(worker__mb_slot, result), 32);
    assert_int_equal(offsetof(worker__mb_slot, after), 40);
    assert_int_equal(offsetof(worker__mb_slot, nkargs), 48);
    assert_int_equal(offsetof(worker__mb_slot, len), 52);
    assert_int_equal(offsetof(worker__mb_slot, blob_off), 56);
    assert_int_equal(offsetof(worker__mb_slot, skipped), 60);
    assert_int_equal(offsetof(worker__mb_slot, kargs), 64);
    assert_int_equal(offsetof(worker__mb_slot, msg), 256);
    assert_int_equal(sizeof(worker__mb_slot), 512);
    assert_int_equal(WORKER__MB_SKIP_DEPENDENCY, 1);
    assert_int_equal(WORKER__MB_SKIP_SHUTDOWN, 2);
    assert_int_equal(WORKER__MB_BLOB_MAX, WORKER_TASK_ARGS_MAX);
    assert_int_equal(WORKER__MB_BLOB_AREA, 4096);
    assert_int_equal(offsetof(worker__mb_ctl, arg), 0);
    assert_int_equal(offsetof(worker__mb_ctl, result), 8);
    assert_int_equal(WORKER__CTRL_DEV_ALLOC, 0x100);
    assert_int_equal(WORKER__CTRL_DEV_FREE, 0x101);
    assert_int_equal(WORKER_CONTROL_PING, 0);
    assert_int_equal(WORKER_CONTROL_DEVICE_REGIONS, 1);
}

static void error_text_truncated_to_255_bytes_and_terminated(void **state)
{
    struct mb_fixture f;
    char long_msg[600];

    mb_open(&f);
    memset(long_msg, 'x', sizeof(long_msg) - 1);
    long_msg[sizeof(long_msg) - 1] = '\0';
    memset(f.mb->frame[0].msg, 'y', WORKER__MB_MSG_SIZE);
    worker__mb_write_error(&f.mb->frame[0], 1, long_msg);
    assert_int_equal(strlen(f.mb->frame[0].msg), 255);
    worker__mb_write_error(&f.mb->frame[0], 1, "short");
    assert_string_equal(f.mb->frame[0].msg, "short");
    /* zero-padded: no stale tail from the longer message */
    assert_int_equal(f.mb->frame[0].msg[6], 0);
    assert_int_equal(f.mb->frame[0].msg[254], 0);
    mb_close(&f);
}

/* Wait (futex, bounded) until the state word reads want. */
static bool await_state(_Atomic uint32_t *word, uint32_t want, int64_t deadline)
{
    for (;;) {
        uint32_t v = worker__mb_load(word);
        if (v == want)
            return true;
        if (worker__futex_wait(word, v, deadline) == -ETIMEDOUT)
            return worker__mb_load(word) == want;
    }
}

static void store_and_wake(_Atomic uint32_t *word, uint32_t v)
{
    worker__mb_store(word, v);
    worker__futex_wake(word, 1);
}

static void child_transitions_visible_in_parent(void **state)
{
    struct mb_fixture f;

    mb_open(&f);
    _Atomic uint32_t *st = &f.mb->frame[0].state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Cycle 0 -> 1 -> 2 -> 3 -> 0, each step acknowledged by the parent
           through the bell, so every transition is observed. */
        int64_t dl = deadline_in(2.0);
        for (uint32_t v = 1; v <= 4; v++) {
            uint32_t seq = worker__mb_load(&f.mb->frame[0].bell);
            store_and_wake(st, v % 4);
            while (worker__mb_load(&f.mb->frame[0].bell) == seq)
                if (worker__futex_wait(&f.mb->frame[0].bell, seq, dl) ==
                    -ETIMEDOUT)
                    _exit(2);
        }
        _exit(0);
    }
    int64_t dl = deadline_in(2.0);
    for (uint32_t v = 1; v <= 4; v++) {
        assert_true(await_state(st, v % 4, dl));
        worker__mb_ring_child(f.mb);
    }
    assert_int_equal(reap(pid), 0);
    assert_int_equal(worker__mb_load(st), 0);
    mb_close(&f);
}

/* 1000 rounds in one child, each acknowledged through the bell: a fork
   per round took 12 to 17 s of the 20 s budget on two loaded cores. */
static void payload_visible_when_state_observed(void **state)
{
    struct mb_fixture f;
    int64_t dl = deadline_in(20.0);

    mb_open(&f);
    _Atomic uint32_t *st = &f.mb->frame[0].state;
    _Atomic uint32_t *bell = &f.mb->frame[0].bell;
    uint64_t *payload = (uint64_t *)f.mb->frame[0].args;
    worker__mb_store(st, 0);
    worker__mb_store(bell, 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (uint32_t i = 0; i < 1000; i++) {
            /* Plain payload store, then the release store of the state. */
            *payload = PAYLOAD ^ i;
            store_and_wake(st, i + 1);
            if (!await_state(bell, i + 1, dl))
                _exit(1);
        }
        _exit(0);
    }
    for (uint32_t i = 0; i < 1000; i++) {
        /* Acquire: whenever the state reads i + 1, round i's payload is
           there. */
        assert_true(await_state(st, i + 1, dl));
        if (*payload != (PAYLOAD ^ i))
            fail_msg("round %u: state observed, payload %#llx", i,
                     (unsigned long long)*payload);
        store_and_wake(bell, i + 1);
    }
    assert_int_equal(reap(pid), 0);
    mb_close(&f);
}

/* The #1562 core at the wire level: a CONTROL_DONE store that lands after
   SHUTDOWN clobbers the state word, but not the sticky word. */
static void sticky_shutdown_survives_a_state_clobber(void **state)
{
    struct mb_fixture f;

    mb_open(&f);
    worker__mb_store(&f.mb->frame[0].state, WORKER__MB_CONTROL_REQUEST);
    worker__mb_send_shutdown(f.mb, 0);
    worker__mb_write_error(&f.mb->frame[0], 0, NULL);
    worker__mb_store(&f.mb->frame[0].state, WORKER__MB_CONTROL_DONE);
    assert_int_equal(worker__mb_load(&f.mb->frame[0].state),
                     WORKER__MB_CONTROL_DONE);
    assert_int_equal(worker__mb_load(&f.mb->frame[0].shutdown), 1);
    mb_close(&f);
}

/* The graceful deadline a SHUTDOWN carries (close_by_ns, offset 48): a
   repeated SHUTDOWN (close after a poison) only brings it nearer, and one
   without a deadline leaves it. */
static void shutdown_deadline_only_comes_nearer(void **state)
{
    struct mb_fixture f;

    assert_int_equal(offsetof(worker__mb_frame, close_by_ns), 48);
    mb_open(&f);
    assert_int_equal(atomic_load(&f.mb->frame[0].close_by_ns), 0);
    worker__mb_send_shutdown(f.mb, 0);
    assert_int_equal(atomic_load(&f.mb->frame[0].close_by_ns), 0);
    worker__mb_send_shutdown(f.mb, 900);
    worker__mb_send_shutdown(f.mb, 1200);
    worker__mb_send_shutdown(f.mb, 0);
    assert_int_equal(atomic_load(&f.mb->frame[0].close_by_ns), 900);
    worker__mb_send_shutdown(f.mb, 500);
    assert_int_equal(atomic_load(&f.mb->frame[0].close_by_ns), 500);
    assert_int_equal(worker__mb_load(&f.mb->frame[0].shutdown), 1);
    mb_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mpf_unit_test(roundtrip, 2000),
        mpf_unit_test(negative, 2000),
        mpf_unit_test(offset, 2000),
        mpf_unit_test(every_declared_state_matches_the_wire_values, 2000),
        mpf_unit_test(task_and_control_overlays_are_pinned, 2000),
        mpf_unit_test(error_text_truncated_to_255_bytes_and_terminated, 2000),
        mpf_unit_test(child_transitions_visible_in_parent, 5000),
        mpf_unit_test(payload_visible_when_state_observed, 20000),
        mpf_unit_test(sticky_shutdown_survives_a_state_clobber, 2000),
        mpf_unit_test(shutdown_deadline_only_comes_nearer, 2000),
    };
    return mpf_run_group_tests(tests, NULL, NULL);
}
