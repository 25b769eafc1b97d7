/* SPDX-License-Identifier: MIT */
/*
 * options.c — what a worker is asked to be: scripts (parsed from their
 * text form) and the options of worker_new(), checked field by field with
 * a message naming the field.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "faults.h"
#include "internal.h"

/* ---- scripts ---- */

static const char *const script_names[WORKER_SCRIPT_KIND_COUNT] = {
    [WORKER_SCRIPT_OK] = "ok",
    [WORKER_SCRIPT_FAIL] = "fail",
    [WORKER_SCRIPT_HANG] = "hang",
    [WORKER_SCRIPT_SLOW_FAIL] = "slow_fail",
    [WORKER_SCRIPT_EXIT] = "exit",
    [WORKER_SCRIPT_CRASH] = "crash",
    [WORKER_SCRIPT_IGNORE_SIGTERM] = "ignore_sigterm",
    [WORKER_SCRIPT_FORK_GRANDCHILD] = "fork_grandchild",
};

static int script_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int script_error(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;

    if (err_size) {
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* At most this much of a script is quoted in an error, then "...". */
#define SCRIPT_QUOTE_MAX 48

WORKER__EXPORT int worker_script_parse(const char *text, size_t len,
                                       worker_script *out, size_t *msg_len,
                                       char *err, size_t err_size)
{
    worker_script s = WORKER_SCRIPT_INIT;
    const char *paren, *arg = NULL;
    size_t name_len, arg_len = 0;
    int k, q;
    const char *more;

    if (!text || !out)
        return script_error(err, err_size, "script text or output is NULL");
    q = len > SCRIPT_QUOTE_MAX ? SCRIPT_QUOTE_MAX : (int)len;
    more = len > SCRIPT_QUOTE_MAX ? "..." : "";
    if (memchr(text, '\0', len))
        return script_error(err, err_size, "script '%.*s%s' holds a NUL byte",
                            q, text, more);
    paren = memchr(text, '(', len);
    name_len = paren ? (size_t)(paren - text) : len;
    if (paren) {
        /* "fail(" is name, '(' and no ')': the ')' must be another byte. */
        if (len < name_len + 2 || text[len - 1] != ')')
            return script_error(err, err_size, "script '%.*s%s': missing ')'",
                                q, text, more);
        arg = paren + 1;
        arg_len = len - name_len - 2;
    }
    for (k = 0; k < WORKER_SCRIPT_KIND_COUNT; k++)
        if (strlen(script_names[k]) == name_len &&
            strncmp(script_names[k], text, name_len) == 0)
            break;
    if (k == WORKER_SCRIPT_KIND_COUNT)
        return script_error(err, err_size,
                            "script '%.*s%s' is unknown (ok, fail[(msg)], "
                            "hang, "
                            "slow_fail(ms), exit(n), crash, ignore_sigterm, "
                            "fork_grandchild)",
                            q, text, more);
    s.kind = (worker_script_kind)k;
    switch (s.kind) {
    case WORKER_SCRIPT_FAIL:
        /* "fail()" is "fail": the default text. */
        if (arg_len >= WORKER_ERROR_MAX)
            return script_error(err, err_size,
                                "script '%.*s%s': message of %zu bytes is "
                                "longer "
                                "than %d",
                                q, text, more, arg_len, WORKER_ERROR_MAX - 1);
        if (arg_len)
            s.msg = arg;
        break;
    case WORKER_SCRIPT_SLOW_FAIL:
    case WORKER_SCRIPT_EXIT: {
        bool is_exit = s.kind == WORKER_SCRIPT_EXIT;
        unsigned long long max = is_exit ? WORKER_SCRIPT_EXIT_MAX
                                         : WORKER_SCRIPT_DELAY_MAX_MS;
        unsigned long long v;
        int qa = arg_len > SCRIPT_QUOTE_MAX ? SCRIPT_QUOTE_MAX : (int)arg_len;
        int rc;

        if (!arg)
            return script_error(err, err_size,
                                "script '%.*s%s': %s needs a "
                                "number in parentheses",
                                q, text, more, script_names[k]);
        rc = worker__parse_decimal(arg, arg_len, max, &v);
        if (rc == -ERANGE)
            return script_error(err, err_size,
                                "script '%.*s%s': %s %.*s%s is "
                                "out of range 0..%llu",
                                q, text, more, is_exit ? "exit code" : "delay",
                                qa, arg, is_exit ? "" : " ms", max);
        if (rc)
            return script_error(err, err_size,
                                "script '%.*s%s': '%.*s' is not "
                                "a decimal number",
                                q, text, more, qa, arg);
        s.arg = (int)v;
        break;
    }
    default:
        if (paren)
            return script_error(err, err_size,
                                "script '%.*s%s': %s takes no "
                                "argument",
                                q, text, more, script_names[k]);
        break;
    }
    if (msg_len)
        *msg_len = s.msg ? arg_len : 0;
    *out = s;
    return 0;
}

/* ---- validation ---- */

#define BAD(...)                                  \
    do {                                          \
        if (msg_size)                             \
            snprintf(msg, msg_size, __VA_ARGS__); \
        return -EINVAL;                           \
    } while (0)

static int check_timeout(const char *field, double v, char *msg,
                         size_t msg_size)
{
    if (isnan(v) || isinf(v))
        BAD("%s must be finite (got %g)", field, v);
    if (v <= 0)
        BAD("%s must be > 0 (got %g)", field, v);
    if (v > 1e6)
        BAD("%s must be at most 1e6 s (got %g)", field, v);
    return 0;
}

static int check_script(const char *what, unsigned i, const worker_script *s,
                        char *msg, size_t msg_size)
{
    if ((unsigned)s->kind >= WORKER_SCRIPT_KIND_COUNT)
        BAD("%s %u: unknown script kind %d", what, i, (int)s->kind);
    if (s->kind == WORKER_SCRIPT_SLOW_FAIL &&
        (s->arg < 0 || s->arg > WORKER_SCRIPT_DELAY_MAX_MS))
        BAD("%s %u: slow_fail delay must be 0..%d ms (got %d)", what, i,
            WORKER_SCRIPT_DELAY_MAX_MS, s->arg);
    if (s->kind == WORKER_SCRIPT_EXIT &&
        (s->arg < 0 || s->arg > WORKER_SCRIPT_EXIT_MAX))
        BAD("%s %u: exit code must be 0..%d (got %d)", what, i,
            WORKER_SCRIPT_EXIT_MAX, s->arg);
    return 0;
}

WORKER__EXPORT int worker_options_validate(const worker_options *opt, char *msg,
                                           size_t msg_size)
{
    int rc;

    if (!opt)
        BAD("options are NULL");
    if (opt->level < WORKER_LEVEL_MIN || opt->level > WORKER_LEVEL_MAX)
        BAD("level must be %d..%d (got %d)", WORKER_LEVEL_MIN, WORKER_LEVEL_MAX,
            opt->level);
    if (opt->num_subs > WORKER_MAX_SUBS)
        BAD("num_subs must be at most %d (got %u)", WORKER_MAX_SUBS,
            opt->num_subs);
    if (opt->num_chips > WORKER_MAX_CHIPS)
        BAD("num_chips must be at most %d (got %u)", WORKER_MAX_CHIPS,
            opt->num_chips);
    if (opt->num_chips && opt->level >= 4)
        BAD("chips (device ids) are rejected at level >= 4 (level %d)",
            opt->level);
    if ((rc = check_timeout("startup_timeout_s", opt->startup_timeout_s, msg,
                            msg_size)) ||
        (rc = check_timeout("rollback_timeout_s", opt->rollback_timeout_s, msg,
                            msg_size)) ||
        (rc = check_timeout("close_timeout_s", opt->close_timeout_s, msg,
                            msg_size)) ||
        (rc = check_timeout("drain_timeout_s", opt->drain_timeout_s, msg,
                            msg_size)))
        return rc;
    if (opt->device_leaks != WORKER_DEVICE_LEAKS_RECLAIM &&
        opt->device_leaks != WORKER_DEVICE_LEAKS_KEEP)
        BAD("device_leaks must be RECLAIM or KEEP (got %d)",
            (int)opt->device_leaks);
    if (opt->chip_memory_bytes &&
        (opt->chip_memory_bytes < 4096 || opt->chip_memory_bytes > (1u << 30)))
        BAD("chip_memory_bytes must be 4096..%u (got %zu)", 1u << 30,
            opt->chip_memory_bytes);
    if (opt->chip_pipeline_depth > 8)
        BAD("chip_pipeline_depth must be 1..8 (got %u)",
            opt->chip_pipeline_depth);
    if (opt->sub_scripts && !opt->num_subs)
        BAD("sub_scripts given without sub children");
    if (opt->chip_scripts && !opt->num_chips)
        BAD("chip_scripts given without chips");
    for (unsigned i = 0; opt->sub_scripts && i < opt->num_subs; i++)
        if ((rc = check_script("sub", i, &opt->sub_scripts[i], msg, msg_size)))
            return rc;
    for (unsigned i = 0; opt->chip_scripts && i < opt->num_chips; i++)
        if ((rc = check_script("chip", i, &opt->chip_scripts[i], msg,
                               msg_size)))
            return rc;
    if ((rc = check_script("self", 0, &opt->self_script, msg, msg_size)))
        return rc;
    if (opt->faults) {
        /* Parse into the process table and roll back: syntax check only. */
        char m[200] = "";
        rc = worker__faults_parse(opt->faults, true, m, sizeof(m));
        if (rc)
            BAD("faults: %s", m);
    }
    if (msg_size)
        msg[0] = '\0';
    return 0;
}

#undef BAD
