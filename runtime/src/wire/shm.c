/* SPDX-License-Identifier: MIT */
/*
 * shm.c — the tree's shm namespace: "/wk-<rootpid>-<token>-<path>" names,
 * the namespace sweep of close/rollback, and reclaim of dead roots' names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "wire.h"

#define SHM_DIR "/dev/shm"

int worker__ns_init(worker *w)
{
    if (w->is_root) {
        uint32_t token;

        /* The token makes two roots of one process distinct; the root pid
           makes names of a dead root recognisable (worker_reclaim_stale). */
        if (getrandom(&token, sizeof(token), GRND_NONBLOCK) != sizeof(token))
            token = (uint32_t)worker__now_ns() ^ (uint32_t)(uintptr_t)w;
        snprintf(w->ns_root, sizeof(w->ns_root), "/wk-%d-%08x-", (int)getpid(),
                 token);
        w->ns_path[0] = '\0';
    }
    int n = snprintf(w->prefix, sizeof(w->prefix), "%s%s", w->ns_root,
                     w->ns_path);
    return n >= (int)sizeof(w->prefix) - 16 ? -ENAMETOOLONG : 0;
}

WORKER__EXPORT const char *worker_shm_prefix(const worker *w)
{
    return w ? w->prefix : "";
}

static bool protected_name(const char *name, const char *const *protect,
                           size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (protect[i] && protect[i][0] == '/' &&
            strcmp(protect[i] + 1, name) == 0)
            return true;
    return false;
}

/* shm_unlink() of a /dev/shm entry name: 1 if it went, else 0. */
static int unlink_entry(const char *name)
{
    char path[NAME_MAX + 2];

    snprintf(path, sizeof(path), "/%s", name);
    return shm_unlink(path) == 0;
}

int worker__shm_sweep(const char *prefix, const char *const *protect,
                      size_t n_protect)
{
    DIR *d;
    struct dirent *e;
    size_t plen;
    int count = 0;

    if (!prefix || prefix[0] != '/' || !prefix[1])
        return -EINVAL;
    prefix++; /* directory entries have no leading '/' */
    plen = strlen(prefix);
    d = opendir(SHM_DIR);
    if (!d)
        return -errno;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        if (protected_name(e->d_name, protect, n_protect))
            continue;
        count += unlink_entry(e->d_name);
    }
    closedir(d);
    return count;
}

WORKER__EXPORT int worker_reclaim_stale(void)
{
    DIR *d;
    struct dirent *e;
    struct stat st;
    int count = 0;
    uid_t me = geteuid();
    pid_t self = getpid();

    d = opendir(SHM_DIR);
    if (!d)
        return -errno;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid;

        if (strncmp(e->d_name, "wk-", 3) != 0)
            continue;
        pid = strtol(e->d_name + 3, &end, 10);
        if (end == e->d_name + 3 || *end != '-' || pid <= 0 || pid == self)
            continue;
        /* Own objects only, and only of a root that no longer exists. A
           live pid (even a reused one) keeps its names: better a leftover
           than deleting a live tree's mailbox. */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_uid != me)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        count += unlink_entry(e->d_name);
    }
    closedir(d);
    return count;
}
