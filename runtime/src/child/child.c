/* SPDX-License-Identifier: MIT */
/*
 * child.c — the one noreturn entry of every forked child (sub, chip,
 * next-level) and its serve loop.
 *
 * Invariant (simpler's "load-bearing" one, made structural here): a forked
 * child never returns into the frames it inherited from its parent. Every
 * path ends in worker__child_exit() -> _exit(); the entry is _Noreturn and
 * the compiler checks that nothing falls off its end.
 *
 * SIGTERM during setup is a cooperative, one-shot cancel: the handler only
 * sets a flag and rings the wake-ups (no longjmp, nothing that is not
 * async-signal-safe). SIGTERM is blocked before INIT_FAILED or INIT_READY
 * is published and stays blocked until _exit or the serve loop, so the
 * window of the seed bug (a cancel landing after INIT_FAILED was stored,
 * simpler #1948) cannot run any code: the pending signal is simply never
 * delivered. With SIGTERM blocked the cancel flag is re-checked right
 * before READY is published: a cancel that arrived at any moment of setup
 * wins.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "child.h"
#include "device/device.h"
#include "faults.h"
#include "proc/proc.h"

/* async-signal-safe: flag, atomic add, futex wake, write. errno saved. */
static void on_signal_from_handler(int sig)
{
    int saved = errno;
    uint64_t one = 1;

    if (sig == SIGTERM)
        worker__self.cancel = 1;
    else
        worker__self.parent_gone = 1;
    atomic_fetch_add(&worker__self.wake, 1);
    worker__futex_wake(&worker__self.wake, 1 << 30);
    if (worker__self.mailbox) {
        atomic_fetch_add(&worker__self.mailbox->frame[0].bell, 1);
        worker__futex_wake(&worker__self.mailbox->frame[0].bell, 1 << 30);
    }
    if (worker__self.doorbell_fd >= 0) {
        ssize_t n = write(worker__self.doorbell_fd, &one, sizeof(one));
        (void)n;
    }
    errno = saved;
}

static void set_disposition(int sig, void (*handler)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: blocking waits must see EINTR */
    sigaction(sig, &sa, NULL);
}

static void block_sigterm(void)
{
    sigset_t s;

    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigprocmask(SIG_BLOCK, &s, NULL);
}

static bool must_stop(void)
{
    return worker__self.cancel || worker__self.parent_gone ||
           getppid() != worker__self.ppid_before_fork;
}

/* With SIGTERM blocked its handler cannot set the flag: a cancel sent
   after the block is a pending signal. */
static bool sigterm_pending(void)
{
    sigset_t p;
    return sigpending(&p) == 0 && sigismember(&p, SIGTERM);
}

/* Wait until the deadline (0: none) unless cancelled or orphaned first.
   Returns 0 at the deadline, -ECANCELED on a cancel. */
static int cancellable_wait(int64_t deadline_ns)
{
    for (;;) {
        uint32_t seq = atomic_load(&worker__self.wake);
        if (must_stop())
            return -ECANCELED;
        if (worker__futex_wait(&worker__self.wake, seq, deadline_ns) ==
            -ETIMEDOUT)
            return 0;
    }
}

/* Hang with SIGTERM ignored; only the parent's death (SIGHUP) or SIGKILL
   ends it. */
static _Noreturn void hang_ignoring_sigterm(void)
{
    set_disposition(SIGTERM, SIG_IGN);
    worker__coverage_flush(); /* it may end by SIGKILL */
    for (;;) {
        uint32_t seq = atomic_load(&worker__self.wake);
        if (worker__self.parent_gone ||
            getppid() != worker__self.ppid_before_fork)
            worker__child_exit(1);
        worker__futex_wait(&worker__self.wake, seq, 0);
    }
}

/* The message of a scripted init failure that names none (constants: a
   child formats nothing on its way to READY). */
static const char *default_msg(worker_child_kind kind)
{
    if (kind == WORKER_CHILD_SUB)
        return "injected sub init failure";
    if (kind == WORKER_CHILD_CHIP)
        return "injected chip init failure";
    return "injected inner init failure";
}

/* Run an init script. 0: continue with the normal init; -EIO with msg:
   init fails; -ECANCELED: cancelled. Some scripts never return. */
static int run_script(const worker_script *s, worker_child_kind kind, char *msg,
                      size_t msg_size)
{
    switch (s->kind) {
    case WORKER_SCRIPT_OK:
    case WORKER_SCRIPT_KIND_COUNT:
        return 0;
    case WORKER_SCRIPT_FAIL:
        snprintf(msg, msg_size, "%s", s->msg ? s->msg : default_msg(kind));
        return -EIO;
    case WORKER_SCRIPT_HANG:
        return cancellable_wait(0);
    case WORKER_SCRIPT_SLOW_FAIL:
        if (cancellable_wait(worker__now_ns() + (int64_t)s->arg * 1000000))
            return -ECANCELED;
        snprintf(msg, msg_size, "%s", s->msg ? s->msg : default_msg(kind));
        return -EIO;
    case WORKER_SCRIPT_EXIT:
        worker__child_exit(s->arg);
    case WORKER_SCRIPT_CRASH: {
        struct rlimit rl = { 0, 0 };
        sigset_t all;

        /* No core dump: a crash test must not wait on the core pipe. */
        prctl(PR_SET_DUMPABLE, 0);
        setrlimit(RLIMIT_CORE, &rl);
        set_disposition(SIGSEGV, SIG_DFL);
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        worker__coverage_flush();
        kill(getpid(), SIGSEGV);
        for (;;)
            pause();
    }
    case WORKER_SCRIPT_IGNORE_SIGTERM:
        hang_ignoring_sigterm();
    case WORKER_SCRIPT_FORK_GRANDCHILD: {
        pid_t pid;

        set_disposition(SIGTERM, SIG_IGN);
        pid = fork();
        if (pid == 0) {
            /* Stays in our process group, ignores SIGTERM and has no
               parent-death signal: only the group kill reaches it. */
            prctl(PR_SET_PDEATHSIG, 0);
            prctl(PR_SET_NAME, "wk-grandchild");
            worker__coverage_flush(); /* ended by the group's SIGKILL */
            for (;;)
                pause();
        }
        hang_ignoring_sigterm();
    }
    }
    return 0;
}

/* The exit descriptors of siblings being forgotten, gathered in runs of
   consecutive numbers: the parent opens them one after the other, so
   each run goes in one close_range(2), not one close(2) a sibling. */
struct fd_runs {
    int first, last;
};

/* Forget one sibling: its mailbox, if it came along, and its exit
   descriptor (none of our business). */
static void forget_sibling(struct fd_runs *r, worker__mailbox *mb, bool kept,
                           int fd)
{
    if (mb && !kept)
        worker__mailbox_unmap(mb);
    if (fd < 0)
        return;
    if (r->first >= 0 && fd == r->last + 1) {
        r->last = fd;
        return;
    }
    if (r->first >= 0)
        worker__procfd_close_range(r->first, r->last);
    r->first = r->last = fd;
}

/* Forget the parent's other children: those of its earlier groups (their
   records) and the earlier ones of ours (the parent's group[] as it was
   at our fork: child.h). Their mailboxes were never copied into us (the
   parent marks each one MADV_DONTFORK right after the fork of its owner,
   so only our own came along; worker__mailbox_keep_from_forks); their
   exit descriptors were. The records are not written (a write would copy
   their pages): n_children = 0 makes them unreachable. */
static void forget_siblings(worker *parent, const struct worker__spawned *group,
                            size_t at)
{
    struct fd_runs r = { -1, -1 };

    for (size_t i = 0; i < parent->n_children; i++) {
        const struct worker__child *c = &parent->children[i];
        forget_sibling(&r, c->mb, c->mb_kept_from_forks, c->pidfd);
    }
    for (size_t i = 0; i < at; i++)
        forget_sibling(&r, group[i].mb, group[i].mb_kept, group[i].pidfd);
    if (r.first >= 0)
        worker__procfd_close_range(r.first, r.last);
    parent->n_children = 0;
    /* A nested parent's own uplink (to our grandparent) is not ours. */
    if (worker__self.uplink_fd >= 0 &&
        worker__self.uplink_fd != parent->doorbell_fd)
        close(worker__self.uplink_fd);
}

static void ring_uplink(void)
{
    uint64_t one = 1;

    if (worker__self.uplink_fd >= 0) {
        ssize_t n = write(worker__self.uplink_fd, &one, sizeof(one));
        (void)n;
    }
}

struct setup_state {
    worker__device dev;
    bool dev_open;
    worker *nested;
    bool nested_ready;
};

/* Tear down what setup built. Returns 0, or non-zero if the nested tree
   did not close cleanly. */
static int undo_setup(worker *parent, struct setup_state *st)
{
    int rc = 0;

    if (st->dev_open)
        worker__device_close(&st->dev, parent->opt.device_leaks ==
                                           WORKER_DEVICE_LEAKS_KEEP);
    st->dev_open = false;
    if (st->nested_ready) {
        rc = worker__nested_close(st->nested);
        st->nested_ready = false;
    }
    return rc;
}

static int setup(worker *parent, struct worker__child *c,
                 struct setup_state *st, char *msg, size_t msg_size)
{
    char m[WORKER_ERROR_MAX] = "";
    int rc;

    if ((rc = WORKER__FAULT(WORKER__FP_SETUP_BEGIN, m, sizeof(m))))
        goto fail;
    if ((rc = run_script(&c->script, c->kind, m, sizeof(m))))
        goto fail;
    switch (c->kind) {
    case WORKER_CHILD_SUB:
        if (parent->opt.sub_init &&
            parent->opt.sub_init(parent->opt.sub_init_arg, c->index, m,
                                 sizeof(m))) {
            rc = -EIO;
            if (!m[0])
                snprintf(m, sizeof(m), "sub init hook failed");
            goto fail;
        }
        break;
    case WORKER_CHILD_CHIP: {
        if ((rc = worker__device_open(&st->dev, c->index, c->dev_name,
                                      parent->opt.chip_memory_bytes,
                                      parent->opt.chip_pipeline_depth, m,
                                      sizeof(m))))
            goto fail;
        st->dev_open = true;
        /* The sleep kernel parks on our bell and stops on SHUTDOWN. */
        st->dev.wake_word = &c->mb->frame[0].bell;
        st->dev.stop_word = &c->mb->frame[0].shutdown;
        st->dev.gone_flag = &worker__self.parent_gone;
        break;
    }
    case WORKER_CHILD_NEXT:
        st->nested = c->nested;
        if ((rc = worker__nested_start(c->nested, &c->mb->frame[0].bell))) {
            /* The nested epoch rolled its own subtree back already. */
            if (rc == -ECANCELED)
                goto fail;
            worker__fmt(m, sizeof(m), "%s", c->nested->last_error);
            goto fail;
        }
        st->nested_ready = true;
        break;
    }
    if ((rc = WORKER__FAULT(WORKER__FP_SETUP_END, m, sizeof(m))))
        goto fail;
    return 0;

fail:
    undo_setup(parent, st);
    if (rc == -ECANCELED || must_stop())
        return -ECANCELED;
    char pre[64];
    worker__child_prefix(parent, c, pre, sizeof(pre));
    worker__fmt(msg, msg_size, "%s%s", pre, m);
    return rc ? rc : -EIO;
}

/* What the serve loop needs. */
struct serve_ctx {
    worker *parent;
    struct worker__child *c;
    struct setup_state *st;
    uint64_t next;   /* seq of the next task to serve (the parent's from 1) */
    uint64_t failed; /* bit i: the task served i + 1 before `next` failed */
    bool owed;       /* completions published while the scheduler listened
                        for the end of the batch, not rung for yet */
    int spins;       /* looks at the ring before parking (spin_budget) */
    bool busy;       /* served something since it last parked */
};

/*
 * How long an idle child looks at its ring before it parks: 200 pauses
 * where it may run beside its parent; where it may run on one CPU only
 * (taskset, a cpuset of one) the parent cannot store a task while the
 * child spins, so the child yields the CPU once instead (wait_for_work),
 * which lets the parent's threads collect and submit before it looks
 * again. Decided once, by the parent's init before it forked us (we have
 * its affinity); a later change of ours changes a latency, never a
 * result.
 */
static int spin_budget(const worker *parent)
{
    return parent->one_cpu ? 0 : 200;
}

/*
 * A control command on the base frame. The error tuple and result are
 * written before CONTROL_DONE is released. Note the store of CONTROL_DONE
 * is unconditional: if the parent stored SHUTDOWN while we were in here,
 * this overwrites it (simpler #1562). That is why the serve loop checks the
 * sticky shutdown word first, which no state store can undo.
 */
static void handle_control(struct serve_ctx *sc)
{
    worker__mailbox *mb = sc->c->mb;
    worker__mb_frame *f = &mb->frame[0];
    worker__mb_ctl *ctl = worker__mb_ctl_of(f);
    uint64_t cmd = f->subcmd, arg = ctl->arg, result = 0;
    char m[WORKER_ERROR_MAX] = "";
    int rc = WORKER__FAULT(WORKER__FP_CONTROL, m, sizeof(m));
    bool chip = sc->c->kind == WORKER_CHILD_CHIP && sc->st->dev_open;
    bool device_cmd = cmd == WORKER__CTRL_DEV_ALLOC ||
                      cmd == WORKER__CTRL_DEV_FREE ||
                      cmd == WORKER_CONTROL_DEVICE_REGIONS;

    if (!rc && device_cmd && !chip) {
        rc = -EINVAL;
        snprintf(m, sizeof(m), "not a chip");
    } else if (!rc) {
        switch (cmd) {
        case WORKER_CONTROL_PING:
            result = (uint64_t)getpid();
            break;
        case WORKER__CTRL_DEV_ALLOC: {
            uint32_t id = 0;
            rc = worker__device_alloc(&sc->st->dev, (size_t)arg, &id, m,
                                      sizeof(m));
            result = id;
            break;
        }
        case WORKER__CTRL_DEV_FREE:
            rc = worker__device_free(&sc->st->dev, (uint32_t)arg, m, sizeof(m));
            break;
        case WORKER_CONTROL_DEVICE_REGIONS:
            result = sc->st->dev.n_regions;
            break;
        default:
            snprintf(m, sizeof(m), "unknown control sub-command %llu",
                     (unsigned long long)cmd);
            rc = -EINVAL;
            break;
        }
    }
    ctl->result = result;
    worker__mb_write_error(f, rc, rc ? m : NULL);
    worker__mb_store(&f->state, WORKER__MB_CONTROL_DONE);
    ring_uplink();
}

/* The slot of the next task in *slot; true if the parent has made it
   READY. (A slot, never NULL: the mailbox is mapped for the child's
   life.) */
static bool next_ready(struct serve_ctx *sc, worker__mb_slot **slot)
{
    *slot = worker__mb_slot_of(sc->c->mb, sc->next);
    return worker__mb_load(&(*slot)->state) == WORKER__MB_TASK_READY;
}

/* Wake the parent's threads that wait and collect themselves. */
static void wake_waiters(void)
{
    struct worker__wake *k = worker__self.uplink_wake;

    atomic_fetch_add(&k->progress, 1);
    if (atomic_load(&k->n_waiters))
        worker__futex_wake(&k->progress, INT_MAX);
}

/* Take the scheduler's `listen` word back to OFF and, if it was armed,
   wake whoever it names: the parent's waiters or its scheduler's doorbell
   (mailbox.h: whoever loses the exchange knows the other side looks at
   the slots itself). */
static void ring_if_listening(worker__mailbox *mb)
{
    uint32_t was = atomic_exchange(&mb->frame[0].listen, WORKER__MB_LISTEN_OFF);

    if (was & WORKER__MB_LISTEN_WAITERS)
        wake_waiters();
    else if (was != WORKER__MB_LISTEN_OFF)
        ring_uplink();
}

/* After a TASK_DONE store: tell a parked scheduler now (EACH) or at the
   end of the batch (BATCH). The fence pairs with the scheduler's between
   arming `listen` and looking at the slots. */
static void published(struct serve_ctx *sc)
{
    worker__mailbox *mb = sc->c->mb;
    uint32_t listen;

    atomic_thread_fence(memory_order_seq_cst);
    listen = atomic_load_explicit(&mb->frame[0].listen, memory_order_relaxed) &
             WORKER__MB_LISTEN_LEVEL;
    if (listen == WORKER__MB_LISTEN_EACH) {
        ring_if_listening(mb);
        sc->owed = false;
    } else if (listen == WORKER__MB_LISTEN_BATCH) {
        sc->owed = true;
    }
}

/* Run the task of a slot. */
static int run_task(struct serve_ctx *sc, worker__mb_slot *slot,
                    uint64_t *result, char *m, size_t msize, bool *abandon)
{
    uint64_t callable = slot->callable;
    uint32_t off = slot->blob_off, len = slot->len;
    const uint8_t *blob = sc->c->mb->blobs + off;
    int rc;

    rc = WORKER__FAULT(WORKER__FP_TASK_BEGIN, m, msize);
    if (rc)
        return rc;
    if (len > WORKER__MB_BLOB_MAX || off > WORKER__MB_BLOB_AREA - len) {
        snprintf(m, msize, "task blob of %u bytes at %u outside the mailbox",
                 len, off);
        return -EPROTO;
    }
    switch (sc->c->kind) {
    case WORKER_CHILD_SUB: {
        const struct worker__callable *cb;
        if (callable >= sc->parent->n_sub_callables) {
            snprintf(m, msize, "no sub callable with id %llu",
                     (unsigned long long)callable);
            return -EINVAL;
        }
        cb = &sc->parent->subs[callable];
        rc = ((worker_sub_fn)cb->fn)(cb->arg, blob, len, m, msize);
        if (rc && !m[0])
            snprintf(m, msize, "callable '%s' failed with code %d", cb->name,
                     rc);
        return rc;
    }
    case WORKER_CHILD_CHIP:
        return worker__device_run(&sc->st->dev, (unsigned)callable, slot->kargs,
                                  slot->nkargs > WORKER__MB_KARGS
                                      ? WORKER__MB_KARGS
                                      : slot->nkargs,
                                  result, m, msize);
    case WORKER_CHILD_NEXT:
        return worker__nested_run(sc->st->nested, sc->c->mb, callable, blob,
                                  len, m, msize, abandon);
    }
    return 0;
}

/* The task of a slot: run it, or skip it when a task it depends on in
   this ring failed (its `after` bits against our record of failures);
   write result, skipped and the error tuple, then TASK_DONE. Returns
   false when the task was abandoned for a shutdown. */
static bool handle_task(struct serve_ctx *sc, worker__mb_slot *slot)
{
    uint64_t seq = slot->seq, result = 0;
    char m[WORKER_ERROR_MAX], msg[WORKER_ERROR_MAX], pre[64];
    bool skip = (slot->after & sc->failed) != 0, abandon = false;
    int rc = -ECANCELED, end;

    m[0] = '\0';
    if (!skip) {
        rc = run_task(sc, slot, &result, m, sizeof(m), &abandon);
        if (abandon) {
            sc->next++; /* left in flight: it was running */
            return false;
        }
        end = WORKER__FAULT(WORKER__FP_TASK_END, rc ? NULL : m,
                            rc ? 0 : sizeof(m));
        if (!rc && end)
            rc = end;
    }
    /* Error chaining: one stable prefix per hop, the whole hop capped at
       255 bytes by the message field. A skipped task has no text: the
       parent names the dependency that failed. A task that succeeded
       writes its code only: the parent reads the text of a failure only
       (endpoint.c), so no task pays for formatting or clearing it. */
    if (rc && !skip) {
        worker__child_prefix(sc->parent, sc->c, pre, sizeof(pre));
        worker__fmt(msg, sizeof(msg), "%s%s", pre, m);
    }
    slot->result = result;
    slot->done_seq = seq;
    slot->skipped = skip ? WORKER__MB_SKIP_DEPENDENCY : WORKER__MB_RAN;
    if (rc)
        worker__mb_slot_write_error(slot, rc, skip ? NULL : msg);
    else
        slot->error = 0;
    worker__mb_store(&slot->state, WORKER__MB_TASK_DONE);
    sc->failed = (sc->failed << 1) | (rc != 0);
    sc->next++;
    published(sc);
    return true;
}

/* Leaving on SHUTDOWN: publish every task still in the ring as not run
   (the parent fails them as it fails the tasks it still queues). */
static void decline_unserved(struct serve_ctx *sc)
{
    worker__mb_slot *slot;

    while (next_ready(sc, &slot)) {
        slot->result = 0;
        slot->done_seq = slot->seq;
        slot->skipped = WORKER__MB_SKIP_SHUTDOWN;
        worker__mb_slot_write_error(slot, -ESHUTDOWN, NULL);
        worker__mb_store(&slot->state, WORKER__MB_TASK_DONE);
        sc->next++;
    }
}

/* Nothing to serve: end the batch (ring a scheduler that listens for it),
   yield once or spin briefly (spin_budget), then park on the bell until
   the parent stores something we must notice. It spins only if it served
   something since it last parked (the parent is dispatching: the next
   task may be a moment away); a child that just became READY, with its
   siblings still being forked, has nothing coming and would only take
   their CPU. The yield on one CPU stays unconditional: it costs the
   parent nothing, and a round trip on one CPU stays two yields (a child
   that parked at READY instead put 20 of 21 fresh processes into a mode
   where the caller's yield found it ineligible, 3.5 us against 1.7 us).
   `bell` is the value read before the last look. */
static void wait_for_work(struct serve_ctx *sc, uint32_t bell)
{
    worker__mailbox *mb = sc->c->mb;
    worker__mb_slot *slot;

    if (sc->owed) {
        sc->owed = false;
        ring_if_listening(mb);
    }
    for (int spin = 0; sc->busy && spin < sc->spins; spin++) {
        if (worker__mb_load(&mb->frame[0].bell) != bell ||
            next_ready(sc, &slot))
            return;
        worker__cpu_relax();
    }
    if (!sc->spins) {
        sched_yield();
        if (worker__mb_load(&mb->frame[0].bell) != bell ||
            next_ready(sc, &slot))
            return;
    }
    /* Once per park, not per task: is the parent still ours? (Its death
       signal sets parent_gone and rings the bell; this is the fallback.) */
    if (worker__shutdown_requested(mb))
        return;
    /* The parent rings for a task only if it sees `parked` after its
       TASK_READY store: announce, fence, look again (mailbox.h). */
    atomic_store_explicit(&mb->frame[0].parked, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!worker__shutdown_seen(mb) &&
        worker__mb_load(&mb->frame[0].state) != WORKER__MB_CONTROL_REQUEST &&
        !next_ready(sc, &slot))
        worker__futex_wait(&mb->frame[0].bell, bell, 0);
    atomic_store_explicit(&mb->frame[0].parked, 0, memory_order_relaxed);
    sc->busy = false;
}

/* Serve until SHUTDOWN (sticky word or state) or the parent's death:
   every task the ring holds, in order, one batch per wake-up; an idle
   child parks and uses no CPU. */
static void serve(struct serve_ctx *sc)
{
    worker__mailbox *mb = sc->c->mb;

    for (;;) {
        uint32_t bell = worker__mb_load(&mb->frame[0].bell);
        worker__mb_slot *slot;

        /* The sticky word first: a CONTROL_DONE of ours may have
           overwritten a SHUTDOWN in the state word. */
        if (worker__shutdown_seen(mb)) {
            decline_unserved(sc);
            return;
        }
        if (worker__mb_load(&mb->frame[0].state) ==
            WORKER__MB_CONTROL_REQUEST) {
            handle_control(sc);
            sc->busy = true;
            continue;
        }
        if (next_ready(sc, &slot)) {
            sc->busy = true;
            if (!handle_task(sc, slot)) {
                decline_unserved(sc);
                return;
            }
            continue;
        }
        wait_for_work(sc, bell);
    }
}

/*
 * In the parent, before it forks an epoch's children: the signals a child
 * must reset to SIG_DFL, i.e. those whose disposition is not SIG_DFL now (a
 * handler, SIG_IGN, or SIGCHLD's no-stop/no-wait flags). Every other
 * disposition is SIG_DFL and survives fork as such, so the child makes one
 * sigaction a signal that needs it instead of one for each of the 60
 * signals (a test process has about six: cmocka's and the guard's).
 * SIGTERM and SIGHUP are left out (the child installs its own), as are
 * SIGKILL, SIGSTOP and glibc's internal signals (sigaction refuses them).
 *
 * Dispositions are process-wide and this is a snapshot: a handler another
 * thread installs while worker_init() forks is not in it. Such a
 * sigaction() races the fork itself (it may equally land after it, where
 * the child never sees it); worker_init() does not order itself against
 * the caller's other threads' sigaction().
 */
void worker__child_signals_to_reset(sigset_t *set)
{
    struct sigaction sa;

    sigemptyset(set);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGTERM || sig == SIGHUP)
            continue;
        if (sigaction(sig, NULL, &sa) != 0)
            continue; /* EINVAL for glibc's own */
        if (sa.sa_handler != SIG_DFL ||
            (sa.sa_flags & (SA_NOCLDSTOP | SA_NOCLDWAIT)))
            sigaddset(set, sig);
    }
}

_Noreturn void worker__child_main(worker *parent, struct worker__child *c,
                                  const struct worker__spawned *group,
                                  size_t at, pid_t ppid_before_fork)
{
    struct setup_state st;
    char msg[WORKER_ERROR_MAX];
    sigset_t none;
    int rc;

    /* Signals are all blocked (the parent blocked them across fork). Reset
       every inherited handler (the test runner's, the fixture's) before
       anything can run one: the parent listed the signals whose
       disposition is not the default (worker__child_signals_to_reset);
       the others are SIG_DFL already and need no call. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&parent->child_sig_reset, sig) == 1)
            set_disposition(sig, SIG_DFL);
    set_disposition(SIGTERM, on_signal_from_handler);
    set_disposition(SIGHUP, on_signal_from_handler);

    worker__self.is_child = true;
    worker__self.cancel = 0;
    worker__self.parent_gone = 0;
    worker__self.ppid_before_fork = ppid_before_fork;
    worker__self.doorbell_fd = -1;
    /* Our record, in our copy: the parent puts the fork's outcome in it
       after the group's last fork (tree/fork.c). */
    c->mb = group[at].mb;
    forget_siblings(parent, group, at);
    worker__self.uplink_fd = parent->doorbell_fd;
    worker__self.uplink_wake = parent->wake;
    worker__self.mailbox = c->mb;
    /* The mailbox the parent made for us must speak our format (a
       library of another version in the parent would not): if not,
       publish nothing and leave; the parent sees an exit before READY. */
    if (!worker__mailbox_check(c->mb))
        worker__child_exit(1);
    if (c->nested)
        worker__nested_after_fork(c->nested);

    /* Parent death: the signal is lost if the parent died before prctl,
       so re-check against the pid captured before fork right after it. */
    prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (getppid() != ppid_before_fork)
        worker__self.parent_gone = 1;
    if (parent->is_root)
        setpgid(0, 0);
    prctl(PR_SET_NAME, c->proc_name);
    _Static_assert(sizeof(worker__self.role) == sizeof(c->role), "role size");
    memcpy(worker__self.role, c->role, sizeof(worker__self.role));
    worker__faults_enter_role(worker__self.role);
    c->mb->frame[0].child_pid = (uint32_t)getpid();

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    memset(&st, 0, sizeof(st));
    rc = setup(parent, c, &st, msg, sizeof(msg));

    /* From here on SIGTERM stays blocked: the publication below and the
       _exit after it cannot be interrupted by a cancel. */
    block_sigterm();
    if (rc == -ECANCELED)
        worker__child_exit(1);
    if (rc == 0 && (rc = WORKER__FAULT(WORKER__FP_BEFORE_INIT_READY, msg,
                                       sizeof(msg))) != 0)
        undo_setup(parent, &st);
    if (rc) {
        worker__mb_write_error(&c->mb->frame[0], 1, msg);
        worker__mb_store(&c->mb->frame[0].state, WORKER__MB_INIT_FAILED);
        ring_uplink();
        (void)WORKER__FAULT(WORKER__FP_AFTER_INIT_FAILED, msg, sizeof(msg));
        worker__child_exit(1);
    }
    if (must_stop() || sigterm_pending()) {
        /* The cancel arrived during setup but after its last check, or
           after SIGTERM was blocked (window (b) of the seed race): either
           way before READY, so it wins. */
        undo_setup(parent, &st);
        worker__child_exit(1);
    }
    c->mb->frame[0].depth = c->kind == WORKER_CHILD_CHIP ? st.dev.depth : 1;
    worker__mb_store(&c->mb->frame[0].state, WORKER__MB_INIT_READY);
    ring_uplink();
    (void)WORKER__FAULT(WORKER__FP_AFTER_INIT_READY, msg, sizeof(msg));

    {
        struct serve_ctx sc = {
            parent, c, &st, 1, 0, false, spin_budget(parent), false
        };
        serve(&sc);
    }

    (void)WORKER__FAULT(WORKER__FP_SERVE_SHUTDOWN, msg, sizeof(msg));
    rc = undo_setup(parent, &st);
    worker__child_exit(rc ? 1 : 0);
}
