/* SPDX-License-Identifier: MIT */
/*
 * faults.c — named fault points armed per role.
 *
 * The table is parsed once in the root (options + WORKER_FAULTS) and
 * inherited by every child across fork; each process then computes the bit
 * set of points armed for its own role, so a disarmed point costs one load
 * and one predictable branch (WORKER__FAULT in faults.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"
#include "proc/proc.h"
#include "wire/wire.h"

enum fault_action {
    FA_DELAY = 1,
    FA_HANG,
    FA_FAIL,
    FA_EXIT,
    FA_SIGTERM,
    FA_SIGKILL,
    FA_SIGNAL_PARENT,
    FA_GATE_WAIT,
    FA_GATE_OPEN,
    FA_GATE_FAIL,
};

struct action {
    enum fault_action kind;
    long arg;
    char msg[128];
};

#define MAX_ENTRIES 32
#define MAX_ACTIONS 4

struct entry {
    char role[WORKER__NAME_MAX];
    unsigned point;
    unsigned n_actions;
    struct action actions[MAX_ACTIONS];
    bool mine; /* matches this process's role */
};

static struct entry table[MAX_ENTRIES];
static unsigned n_table;
static worker_gates *gates;
static worker_fault_hook_fn hook;

uint32_t worker__fault_mask;

#define POINT_NAME(id, name) [WORKER__FP_##id] = #name,
static const char *const point_names[WORKER__FP_COUNT] = {
    WORKER__FAULT_POINTS(POINT_NAME) /* [WORKER__FP_<ID>] = "<name>", */
};
#undef POINT_NAME

_Static_assert(WORKER__FP_COUNT <= 32, "fault mask is 32 bits");

WORKER__EXPORT const char *worker_fault_point_name(unsigned point)
{
    return point < WORKER__FP_COUNT ? point_names[point] : NULL;
}

/* Argument of an action: none, a number in [min, max], or an optional text. */
enum arg_kind { ARG_NONE, ARG_NUMBER, ARG_OPTIONAL_TEXT };

#define FAULT_DELAY_MAX_MS 3600000

static const struct {
    const char *name;
    enum fault_action kind;
    enum arg_kind arg;
    long min, max;    /* ARG_NUMBER: the range, inclusive */
    const char *what; /* ARG_NUMBER: what the number is, for errors */
} action_names[] = {
    { "delay", FA_DELAY, ARG_NUMBER, 0, FAULT_DELAY_MAX_MS, "delay" },
    { "hang", FA_HANG, ARG_NONE, 0, 0, NULL },
    { "fail", FA_FAIL, ARG_OPTIONAL_TEXT, 0, 0, NULL },
    { "exit", FA_EXIT, ARG_NUMBER, 0, 255, "exit code" },
    { "sigterm", FA_SIGTERM, ARG_NONE, 0, 0, NULL },
    { "sigkill", FA_SIGKILL, ARG_NONE, 0, 0, NULL },
    { "signal_parent", FA_SIGNAL_PARENT, ARG_NUMBER, 1, NSIG - 1, "signal" },
    { "gate_wait", FA_GATE_WAIT, ARG_NUMBER, 0, WORKER_GATES_COUNT - 1,
      "gate" },
    { "gate_open", FA_GATE_OPEN, ARG_NUMBER, 0, WORKER_GATES_COUNT - 1,
      "gate" },
    { "gate_fail", FA_GATE_FAIL, ARG_NUMBER, 0, WORKER_GATES_COUNT - 1,
      "gate" },
};

static const char *skip_ws(const char *s, const char *end)
{
    while (s < end && isspace((unsigned char)*s))
        s++;
    return s;
}

static const char *trim_end(const char *s, const char *end)
{
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    return end;
}

static int parse_action(const char *s, const char *end, struct action *a,
                        char *msg, size_t msg_size)
{
    const char *paren = memchr(s, '(', (size_t)(end - s));
    const char *name_end = paren ? paren : end;
    const char *arg = NULL;
    size_t n = 0;

    name_end = trim_end(s, name_end);
    if (paren) {
        if (end[-1] != ')') {
            snprintf(msg, msg_size, "fault action '%.*s': missing ')'",
                     (int)(end - s), s);
            return -EINVAL;
        }
        arg = paren + 1;
        n = (size_t)(end - 1 - arg);
    }
    for (size_t i = 0; i < sizeof(action_names) / sizeof(action_names[0]);
         i++) {
        if (strlen(action_names[i].name) != (size_t)(name_end - s) ||
            strncmp(action_names[i].name, s, (size_t)(name_end - s)) != 0)
            continue;
        memset(a, 0, sizeof(*a));
        a->kind = action_names[i].kind;
        enum arg_kind want = action_names[i].arg;
        if ((want == ARG_NONE && arg) || (want == ARG_NUMBER && !arg)) {
            snprintf(msg, msg_size, "fault action '%s': %s",
                     action_names[i].name,
                     want == ARG_NONE ? "takes no argument"
                                      : "needs an argument");
            return -EINVAL;
        }
        if (want == ARG_NUMBER) {
            unsigned long long v;
            int rc =
                worker__parse_decimal(arg, n,
                                      (unsigned long long)action_names[i].max,
                                      &v);

            if (rc == 0 && v < (unsigned long long)action_names[i].min)
                rc = -ERANGE;
            if (rc == -ERANGE) {
                snprintf(msg, msg_size,
                         "fault action '%.*s': bad number %.*s, "
                         "%s must be %ld..%ld%s",
                         (int)(end - s), s, (int)n, arg, action_names[i].what,
                         action_names[i].min, action_names[i].max,
                         a->kind == FA_DELAY ? " ms" : "");
                return -EINVAL;
            }
            if (rc) {
                snprintf(msg, msg_size,
                         "fault action '%.*s': '%.*s' is not a "
                         "decimal number",
                         (int)(end - s), s, (int)n, arg);
                return -EINVAL;
            }
            a->arg = (long)v;
        } else if (arg && n) {
            /* Refused rather than cut: the text is what a test asserts on. */
            if (n >= sizeof(a->msg)) {
                snprintf(msg, msg_size,
                         "fault action '%s': message of %zu bytes "
                         "is longer than %zu",
                         action_names[i].name, n, sizeof(a->msg) - 1);
                return -EINVAL;
            }
            memcpy(a->msg, arg, n);
        } else if (a->kind == FA_FAIL) {
            /* "fail" and "fail()" */
            snprintf(a->msg, sizeof(a->msg), "injected fault");
        }
        return 0;
    }
    snprintf(msg, msg_size, "unknown fault action '%.*s'", (int)(name_end - s),
             s);
    return -EINVAL;
}

static int parse_entry(const char *s, const char *end, char *msg,
                       size_t msg_size)
{
    struct entry e;
    const char *colon, *eq, *p;

    memset(&e, 0, sizeof(e));
    s = skip_ws(s, end);
    end = trim_end(s, end);
    if (s == end)
        return 0; /* empty entry, e.g. trailing ';' */
    colon = memchr(s, ':', (size_t)(end - s));
    eq = colon ? memchr(colon, '=', (size_t)(end - colon)) : NULL;
    if (!colon || !eq || colon == s) {
        snprintf(msg, msg_size, "fault entry '%.*s': want ROLE:POINT=ACTION",
                 (int)(end - s), s);
        return -EINVAL;
    }
    const char *role_end = trim_end(s, colon);
    if ((size_t)(role_end - s) >= sizeof(e.role)) {
        snprintf(msg, msg_size, "fault role of %zu bytes is longer than %zu",
                 (size_t)(role_end - s), sizeof(e.role) - 1);
        return -EINVAL;
    }
    memcpy(e.role, s, (size_t)(role_end - s));

    const char *pt = skip_ws(colon + 1, eq), *pt_end = trim_end(pt, eq);
    e.point = WORKER__FP_COUNT;
    for (unsigned i = 0; i < WORKER__FP_COUNT; i++)
        if (strlen(point_names[i]) == (size_t)(pt_end - pt) &&
            strncmp(point_names[i], pt, (size_t)(pt_end - pt)) == 0)
            e.point = i;
    if (e.point == WORKER__FP_COUNT) {
        snprintf(msg, msg_size, "unknown fault point '%.*s'",
                 (int)(pt_end - pt), pt);
        return -EINVAL;
    }

    /* '+' separates actions; it cannot occur inside an argument (messages
       may not contain '+' or ';'). Each of the n+1 pieces around n '+' must
       be an action: "hang+" is an error, not "hang". */
    p = eq + 1;
    if (skip_ws(p, end) == end) {
        snprintf(msg, msg_size, "fault entry without action");
        return -EINVAL;
    }
    for (;;) {
        const char *a_end = memchr(p, '+', (size_t)(end - p));
        if (!a_end)
            a_end = end;
        const char *as = skip_ws(p, a_end), *ae = trim_end(as, a_end);
        if (e.n_actions == MAX_ACTIONS) {
            snprintf(msg, msg_size, "too many actions (max %d)", MAX_ACTIONS);
            return -EINVAL;
        }
        if (as == ae) {
            snprintf(msg, msg_size, "fault entry '%.*s': empty fault action",
                     (int)(end - s), s);
            return -EINVAL;
        }
        int rc = parse_action(as, ae, &e.actions[e.n_actions], msg, msg_size);
        if (rc)
            return rc;
        e.n_actions++;
        if (a_end == end)
            break;
        p = a_end + 1;
    }
    if (n_table == MAX_ENTRIES) {
        snprintf(msg, msg_size, "too many fault entries (max %d)", MAX_ENTRIES);
        return -EINVAL;
    }
    table[n_table++] = e;
    return 0;
}

WORKER__EXPORT int worker__faults_parse(const char *spec, bool dry_run,
                                        char *msg, size_t msg_size)
{
    const char *s = spec, *end;
    unsigned saved = n_table;

    if (!spec)
        return 0;
    end = spec + strlen(spec);
    while (s < end) {
        const char *e = memchr(s, ';', (size_t)(end - s));
        if (!e)
            e = end;
        int rc = parse_entry(s, e, msg, msg_size);
        if (rc) {
            n_table = saved; /* all or nothing */
            return rc;
        }
        s = e + 1;
    }
    if (dry_run)
        n_table = saved;
    return 0;
}

WORKER__EXPORT bool worker__faults_need_gates(void)
{
    for (unsigned i = 0; i < n_table; i++)
        for (unsigned j = 0; j < table[i].n_actions; j++)
            if (table[i].actions[j].kind == FA_GATE_WAIT ||
                table[i].actions[j].kind == FA_GATE_OPEN ||
                table[i].actions[j].kind == FA_GATE_FAIL)
                return true;
    return false;
}

WORKER__EXPORT void worker__faults_enter_role(const char *role)
{
    uint32_t mask = 0;

    for (unsigned i = 0; i < n_table; i++) {
        table[i].mine = fnmatch(table[i].role, role, 0) == 0;
        if (table[i].mine)
            mask |= 1u << table[i].point;
    }
    if (hook)
        mask = (1u << WORKER__FP_COUNT) - 1; /* the hook runs everywhere */
    worker__fault_mask = mask;
}

void worker__faults_set_gates(worker_gates *g)
{
    gates = g;
}

WORKER__EXPORT void worker__faults_reset(void)
{
    n_table = 0;
    gates = NULL;
    worker__fault_mask = 0;
}

/* A delay that signals do not shorten: the absolute deadline survives
   EINTR. This is a scripted delay, not a wait for a condition. */
static void delay_ms(long ms)
{
    struct timespec ts;
    int64_t t = worker__now_ns() + (int64_t)ms * 1000000;

    ts.tv_sec = t / 1000000000;
    ts.tv_nsec = t % 1000000000;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

WORKER__EXPORT void worker_set_fault_hook(worker_fault_hook_fn fn)
{
    hook = fn;
}

/*
 * A child about to die or hang at a scripted fault says where in its
 * mailbox first: its parent then names the point and the action in the
 * error (a crash or a hang leaves no message of its own).
 */
static void leave_fault_word(unsigned point, int action)
{
    if (worker__self.is_child && worker__self.mailbox)
        worker__mb_store(&worker__self.mailbox->frame[0].fault,
                         ((uint32_t)action << 8) | (point + 1));
}

void worker__fault_note(const worker__mailbox *mb, char *buf, size_t size)
{
    uint32_t f = mb ? worker__mb_load(&mb->frame[0].fault) : 0;
    unsigned point = (f & 0xffu) - 1, action = f >> 8;
    const char *aname = "?";

    buf[0] = '\0';
    if (!f || point >= WORKER__FP_COUNT)
        return;
    for (size_t i = 0; i < sizeof(action_names) / sizeof(action_names[0]); i++)
        if ((unsigned)action_names[i].kind == action)
            aname = action_names[i].name;
    snprintf(buf, size, ", at fault point %s (%s)", point_names[point], aname);
}

int worker__fault_fire(unsigned point, char *msg, size_t msg_size)
{
    if (hook)
        hook(point);
    for (unsigned i = 0; i < n_table; i++) {
        struct entry *e = &table[i];

        if (!e->mine || e->point != point)
            continue;
        for (unsigned j = 0; j < e->n_actions; j++) {
            struct action *a = &e->actions[j];

            switch (a->kind) {
            case FA_DELAY:
                delay_ms(a->arg);
                break;
            case FA_HANG:
                /* Before the word: whoever reads it may SIGKILL us. */
                worker__coverage_flush(); /* only SIGKILL ends it */
                leave_fault_word(point, FA_HANG);
                for (;;)
                    pause();
            case FA_FAIL:
                if (msg_size)
                    snprintf(msg, msg_size, "%s", a->msg);
                return -EIO;
            case FA_EXIT:
                /* Never exits the caller of the library: children only. */
                if (worker__self.is_child) {
                    leave_fault_word(point, FA_EXIT);
                    worker__child_exit((int)a->arg);
                }
                break;
            case FA_SIGTERM:
                worker__coverage_flush();
                leave_fault_word(point, FA_SIGTERM);
                kill(getpid(), SIGTERM);
                break;
            case FA_SIGKILL:
                worker__coverage_flush();
                leave_fault_word(point, FA_SIGKILL);
                kill(getpid(), SIGKILL);
                break;
            case FA_SIGNAL_PARENT:
                /* The parent is signalled only while it is still the process
                   that forked us (the pid cannot have been reused: it is our
                   parent, alive). */
                if (worker__self.is_child &&
                    getppid() == worker__self.ppid_before_fork)
                    kill(worker__self.ppid_before_fork, (int)a->arg);
                break;
            case FA_GATE_WAIT:
                if (gates) {
                    leave_fault_word(point, FA_GATE_WAIT);
                    worker__gate_wait(gates, (unsigned)a->arg);
                    /* Released: no longer held there. */
                    if (worker__self.is_child && worker__self.mailbox)
                        worker__mb_store(&worker__self.mailbox->frame[0].fault,
                                         0);
                }
                break;
            case FA_GATE_OPEN:
                if (gates)
                    worker_gate_open(gates, (unsigned)a->arg);
                break;
            case FA_GATE_FAIL:
                /* Fail while the gate is closed: lets a test hold a step
                   (e.g. a reap) and release it later, deterministically. */
                if (gates && !worker__gate_is_open(gates, (unsigned)a->arg)) {
                    if (msg_size)
                        snprintf(msg, msg_size, "gate %ld is closed", a->arg);
                    return -EIO;
                }
                break;
            }
        }
    }
    return 0;
}
