/* SPDX-License-Identifier: MIT */
/*
 * audit_stubs.h — what audit_file.c needs of the rest of the library, for
 * the programs that compile the audit writer in (it is internal):
 * audit_tear.c, audit_concurrent.c. Include once, in the program's one
 * source file.
 */
#ifndef MPF_TEST_AUDIT_STUBS_H
#define MPF_TEST_AUDIT_STUBS_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "ledger/ledger.h"
#include "report/report.h"

struct mpf__shared *mpf__page;

int mpf__sys_open(const char *path, int flags)
{
    return open(path, flags, 0644);
}

void mpf__buf_mem(struct mpf__buf *b, const char *s, size_t n)
{
    size_t room = b->cap - b->len;
    if (n > room)
        n = room;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void mpf__buf_str(struct mpf__buf *b, const char *s)
{
    mpf__buf_mem(b, s, strlen(s));
}

void mpf__buf_i64(struct mpf__buf *b, int64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    mpf__buf_mem(b, tmp, n > 0 ? (size_t)n : 0);
}

void mpf__report_note(mpf_report *r, const char *fmt, ...)
{
    (void)r;
    (void)fmt; /* the writers see a lost line as report.passed == false */
}

#endif
