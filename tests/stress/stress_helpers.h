/* SPDX-License-Identifier: MIT */
/*
 * stress_helpers.h — helpers shared by the stress suites (header-only,
 * static functions: each suite is one translation unit). Builds on the
 * runtime suites' rt_helpers.h.
 */
#ifndef STRESS_HELPERS_H
#define STRESS_HELPERS_H

#include <dirent.h>

#include <mpfixture/worker.h>
#include "rt_helpers.h"

static inline const worker_rollback_entry *
stress_find_entry(const worker_rollback_report *r, worker_child_kind kind,
                  unsigned index)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->entries[i].kind == kind && r->entries[i].index == index)
            return &r->entries[i];
    return NULL;
}

/* Names in /dev/shm that start with a worker's prefix ("/wk-…-"), so "zero
   shm left" is checked against the tree itself, not only by the guard. */
static inline size_t stress_shm_left(const char *prefix, char *first,
                                     size_t first_size)
{
    DIR *d;
    struct dirent *e;
    size_t n = 0;

    if (!prefix || prefix[0] != '/' || !prefix[1])
        return 0;
    d = opendir("/dev/shm");
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        /* A prefix test: strncmp() stops at the shorter string's NUL. */
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        if (strncmp(e->d_name, prefix + 1, strlen(prefix + 1)) != 0)
            continue;
        if (n++ == 0 && first_size)
            snprintf(first, first_size, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

#define assert_no_shm_left(w)                                                \
    do {                                                                     \
        char first_[256] = "";                                               \
        size_t n_ = stress_shm_left(worker_shm_prefix(w), first_,            \
                                    sizeof(first_));                         \
        if (n_)                                                              \
            fail_msg("%zu /dev/shm object(s) of the tree left, e.g. %s", n_, \
                     first_);                                                \
    } while (0)

/* The child ended through _exit(code): not by a signal, not escaped (an
   escaped child is stopped by the fixture with MPF_ESCAPED_EXIT_STATUS). */
#define assert_exited_with(status, code)                              \
    do {                                                              \
        int s_ = (status);                                            \
        if (!WIFEXITED(s_))                                           \
            fail_msg("child did not _exit: wait status %#x%s", s_,    \
                     WIFSIGNALED(s_) ? " (killed by a signal)" : ""); \
        if (WEXITSTATUS(s_) != (code))                                \
            fail_msg("child exited with %d, documented code is %d%s", \
                     WEXITSTATUS(s_), (code),                         \
                     WEXITSTATUS(s_) == MPF_ESCAPED_EXIT_STATUS       \
                         ? " (the fixture stopped it: escaped fork)"  \
                         : "");                                       \
    } while (0)

#endif /* STRESS_HELPERS_H */
