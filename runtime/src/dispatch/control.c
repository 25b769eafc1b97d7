/* SPDX-License-Identifier: MIT */
/*
 * control.c — control commands to one child (CONTROL_REQUEST / CONTROL_DONE),
 * queued for the scheduler, waited for by the caller (dispatch.h).
 */
#include <errno.h>
#include <string.h>

#include "child/child.h"
#include "dispatch.h"
#include "testing.h"

/* ---- control commands ---- */

struct ctl_wait {
    struct worker__child *c;
    struct worker__ctl *ctl;
};

static bool ctl_slot_free(worker *w, void *arg)
{
    struct ctl_wait *cw = arg;
    return !w->sched_running || cw->c->ctl == NULL;
}

static bool ctl_done(worker *w, void *arg)
{
    (void)w;
    return ((struct ctl_wait *)arg)->ctl->done;
}

int worker__control(worker *w, struct worker__child *c, unsigned cmd,
                    uint64_t arg, int64_t deadline_ns, uint64_t *result,
                    char *msg, size_t msg_size)
{
    struct worker__ctl ctl;
    struct ctl_wait cw = { c, &ctl };

    memset(&ctl, 0, sizeof(ctl));
    ctl.cmd = cmd;
    ctl.arg = arg;
    ctl.deadline_ns = deadline_ns;
    /* One command per child at a time: wait for the slot (not an issued
       command, so running out of time here poisons nothing). */
    if (worker__wait_for(w, ctl_slot_free, &cw, deadline_ns)) {
        worker__fmt(msg, msg_size,
                    "control %s timed out waiting for another "
                    "command on that child",
                    worker__ctl_name(cmd));
        return -ETIMEDOUT;
    }
    pthread_mutex_lock(&w->mu);
    if (!w->sched_running) {
        pthread_mutex_unlock(&w->mu);
        worker__fmt(msg, msg_size, "control %s: worker is closed",
                    worker__ctl_name(cmd));
        return -ESHUTDOWN;
    }
    if (c->ctl) { /* another caller took the slot first: queue again */
        pthread_mutex_unlock(&w->mu);
        return worker__control(w, c, cmd, arg, deadline_ns, result, msg,
                               msg_size);
    }
    /* The scheduler clears c->ctl when it completes the command, and we
       return only after that (ctl_done below). */
    c->ctl = &ctl; /* cppcheck-suppress autoVariables */
    c->ctl_issued = false;
    worker__kick(w);
    pthread_mutex_unlock(&w->mu);
    /* The scheduler finishes every command it holds: reply, deadline,
       death, or its own stop. */
    worker__wait_for(w, ctl_done, &cw, 0);
    if (ctl.rc == 0 && result)
        *result = ctl.result;
    if (ctl.rc)
        worker__fmt(msg, msg_size, "%s", ctl.msg);
    return ctl.rc;
}

WORKER__EXPORT int worker_control(worker *w, worker_child_kind kind,
                                  unsigned index, worker_control_cmd cmd,
                                  uint64_t arg, double timeout_s,
                                  uint64_t *result)
{
    struct worker__child *c;
    char msg[WORKER_ERROR_MAX];
    int rc;

    if (!w)
        return -EINVAL;
    if ((cmd != WORKER_CONTROL_PING && cmd != WORKER_CONTROL_DEVICE_REGIONS) ||
        worker__check_timeout(timeout_s)) {
        worker__set_error(w, "control: unknown command %d or bad timeout",
                          (int)cmd);
        return -EINVAL;
    }
    if ((rc = worker__admit(w, "control")))
        return rc;
    c = worker__find_child(w, kind, index);
    if (!c) {
        worker__set_error(w, "control: no %s child %u",
                          worker_child_kind_name(kind), index);
        return -ENOENT;
    }
    rc = worker__control(w, c, cmd, arg, worker__deadline_of(timeout_s), result,
                         msg, sizeof(msg));
    if (rc)
        worker__set_error(w, "%s", msg);
    return rc;
}

WORKER__EXPORT int worker_child_mailbox_state(const worker *w,
                                              worker_child_kind kind,
                                              unsigned index)
{
    struct worker__child *c;

    if (!w)
        return -EINVAL;
    c = worker__find_child((worker *)w, kind, index);
    if (!c || !c->mb)
        return -ENOENT;
    return (int)worker__mb_load(&c->mb->frame[0].state);
}

WORKER__EXPORT int64_t worker_child_task_wakeups(worker *w,
                                                 worker_child_kind kind,
                                                 unsigned index)
{
    struct worker__child *c;
    int64_t n;

    if (!w)
        return -EINVAL;
    c = worker__find_child(w, kind, index);
    if (!c)
        return -ENOENT;
    pthread_mutex_lock(&w->mu);
    n = (int64_t)c->task_wakeups;
    pthread_mutex_unlock(&w->mu);
    return n;
}
