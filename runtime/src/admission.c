/* SPDX-License-Identifier: MIT */
/*
 * admission.c — one table says, for every public operation and every
 * state of the worker, whether the call goes on, waits for the startup
 * epoch in progress, or fails, with which errno and which message.
 *
 *                NEW       INITIALIZING  READY       FAILED      CLOSED
 *   init         go        wait          -EALREADY   -EPERM      -ESHUTDOWN
 *   add_child    go        -EBUSY        -EBUSY      -EBUSY      -EBUSY
 *   register     go        -EBUSY        -EBUSY      -EPERM      -ESHUTDOWN
 *   run, control,
 *   device       -EPERM    wait          go          -EPERM      -ESHUTDOWN
 *
 * (simpler's rules: the topology and the callables are frozen at init;
 * a FAILED worker must be closed and replaced; CLOSED is absorbing.)
 * Callers handle what is not a state first: NULL handles and bad
 * arguments, a worker attached as a child, init re-entered by its own
 * thread. A caller that waited for an epoch takes that epoch's outcome
 * (lifecycle.c, dispatch/job.c), not this table's row for the state it left.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

struct rule {
    int rc;          /* 0: admitted; WAIT; else a negative errno */
    const char *msg; /* "{op}" and "{state}" are filled in */
};

#define WAIT WORKER__ADMIT_WAIT
#define CLOSE_IT "startup failed; close this worker and create a new one"

static const struct rule table[WORKER__OP_COUNT][WORKER_CLOSED + 1] = {
    [WORKER__OP_INIT] = {
        [WORKER_NEW] = { 0, NULL },
        [WORKER_INITIALIZING] = { WAIT, NULL },
        [WORKER_READY] = { -EALREADY, "already initialized" },
        [WORKER_FAILED] = { -EPERM, CLOSE_IT },
        [WORKER_CLOSED] = { -ESHUTDOWN, "worker is closed" },
    },
    [WORKER__OP_ADD_CHILD] = {
        [WORKER_NEW] = { 0, NULL },
        [WORKER_INITIALIZING] = { -EBUSY, "add_child before init: worker is {state}" },
        [WORKER_READY] = { -EBUSY, "add_child before init: worker is {state}" },
        [WORKER_FAILED] = { -EBUSY, "add_child before init: worker is {state}" },
        [WORKER_CLOSED] = { -EBUSY, "add_child before init: worker is {state}" },
    },
    [WORKER__OP_REGISTER] = {
        [WORKER_NEW] = { 0, NULL },
        [WORKER_INITIALIZING] = { -EBUSY, "register before init: callables are "
                                          "copied into the children when they "
                                          "are forked (worker is {state})" },
        [WORKER_READY] = { -EBUSY, "register before init: callables are copied "
                                   "into the children when they are forked "
                                   "(worker is {state})" },
        [WORKER_FAILED] = { -EPERM, "register: " CLOSE_IT },
        [WORKER_CLOSED] = { -ESHUTDOWN, "register: worker is closed" },
    },
    [WORKER__OP_READY] = {
        [WORKER_NEW] = { -EPERM, "{op}: not initialized (call worker_init() first)" },
        [WORKER_INITIALIZING] = { WAIT, NULL },
        [WORKER_READY] = { 0, NULL },
        [WORKER_FAILED] = { -EPERM, "{op}: " CLOSE_IT },
        [WORKER_CLOSED] = { -ESHUTDOWN, "{op}: worker is closed" },
    },
};

/* msg with {op} and {state} filled in. */
static void fill(char *out, size_t size, const char *msg, const char *op,
                 const char *state)
{
    size_t len = 0;
    while (*msg && len + 1 < size) {
        const char *with = NULL;
        if (strncmp(msg, "{op}", 4) == 0) {
            with = op;
            msg += 4;
        } else if (strncmp(msg, "{state}", 7) == 0) {
            with = state;
            msg += 7;
        }
        if (with) {
            while (*with && len + 1 < size)
                out[len++] = *with++;
            continue;
        }
        out[len++] = *msg++;
    }
    out[len] = '\0';
}

int worker__admission(worker *w, enum worker__op op, const char *what,
                      worker_state st)
{
    if ((unsigned)op >= WORKER__OP_COUNT || (unsigned)st > WORKER_CLOSED)
        return -EINVAL;
    const struct rule *r = &table[op][st];
    if (r->rc < 0) {
        char msg[WORKER_ERROR_MAX];
        fill(msg, sizeof msg, r->msg, what ? what : "", worker_state_name(st));
        worker__set_error(w, "%s", msg);
    }
    return r->rc;
}
