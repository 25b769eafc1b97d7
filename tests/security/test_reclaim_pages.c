/* SPDX-License-Identifier: MIT */
/*
 * What mpf-run --reclaim (mpf__reclaim) takes and what it leaves among
 * files named like a runner's page of a dead supervisor (pid 2147483647,
 * which no process has; the start time is this process's pid, so that
 * runs of this test never meet):
 *   - left: a name that does not parse (its pid, start or number), a file
 *     of another size, a file others may read, a file without the page's
 *     magic or of another version, a symbolic link to a page;
 *   - reclaimed, with its line, and removed: a page no case ever opened,
 *     and a page whose case ended without an audit line.
 * Prints "ok" when every check holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fixture/inprocess_check.h"
#include "ledger/ledger.h"
#include "run/run.h"

#define DEAD "2147483647"

enum kind { SHORT, READABLE, NO_MAGIC, OTHER_VERSION, NEVER_OPENED, ENDED };

static char names[16][96];
static unsigned n_names;

/* A name of this run in /dev/shm: "/dev/shm/.mpf-page-" + tail. */
static const char *path_of(const char *tail)
{
    static char path[128];
    snprintf(path, sizeof path, "/dev/shm/%s%s", MPF__PAGE_PREFIX, tail);
    return path;
}

/* "<pid>-<mark><this process's pid>-<n>": a name of this run. */
static const char *named(const char *pid, const char *mark, const char *n)
{
    char *name = names[n_names++];
    snprintf(name, sizeof names[0], "%s-%s%d-%s", pid, mark, (int)getpid(), n);
    return name;
}

static int make(const char *tail, enum kind kind)
{
    int fd = open(path_of(tail), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t size = kind == SHORT ? 10 : sizeof(struct mpf__shared);
    if (ftruncate(fd, (off_t)size) != 0 ||
        (kind == READABLE && fchmod(fd, 0644) != 0))
        return -1;
    if (kind != SHORT && kind != NO_MAGIC) {
        struct mpf__shared *pg = mmap(NULL, sizeof *pg, PROT_READ | PROT_WRITE,
                                      MAP_SHARED, fd, 0);
        if (pg == MAP_FAILED)
            return -1;
        pg->magic = MPF__SHARED_MAGIC;
        pg->version = MPF__SHARED_VERSION + (kind == OTHER_VERSION);
        if (kind == ENDED) {
            atomic_store(&pg->seq, 2); /* one case, closed, never audited */
            snprintf(pg->case_name, sizeof pg->case_name, "ended_case");
            snprintf(pg->binary, sizeof pg->binary, "test_reclaim_pages");
        }
        munmap(pg, sizeof *pg);
    }
    return close(fd);
}

static bool exists(const char *tail)
{
    struct stat st;
    return lstat(path_of(tail), &st) == 0;
}

/* mpf__reclaim()'s stdout, in `out`. */
static long reclaim(char *out, size_t size)
{
    char tmp[] = "/tmp/mpf-reclaim-out-XXXXXX";
    int fd = mkstemp(tmp);
    int saved = dup(1);
    if (fd < 0 || saved < 0)
        return -1000;
    fflush(stdout);
    dup2(fd, 1);
    long n = mpf__reclaim();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    ssize_t got = pread(fd, out, size - 1, 0);
    out[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(tmp);
    return n;
}

/* The names of this run (see the top), each kind of file made. */
static const char *left[10], *never, *ended;

static int reclaim_takes_only_pages_of_dead_runs(void)
{
    char out[8192], want[256];
    for (unsigned i = 0; i < 5; i++)
        CHECK(make(left[i], ENDED) == 0, "%s", left[i]);
    CHECK(make(left[5], SHORT) == 0 && make(left[6], READABLE) == 0 &&
              make(left[7], NO_MAGIC) == 0 &&
              make(left[9], OTHER_VERSION) == 0 &&
              make(never, NEVER_OPENED) == 0 && make(ended, ENDED) == 0,
          "the pages");
    char target[128];
    snprintf(target, sizeof target, "%s", path_of(never));
    CHECK(symlink(target, path_of(left[8])) == 0, "the symlink");

    long n = reclaim(out, sizeof out);
    CHECK(n >= 0, "mpf__reclaim: %ld", n);
    snprintf(want, sizeof want,
             "mpf-run: reclaimed %s%s: case '(none)' of : 0 shm objects "
             "removed\n",
             MPF__PAGE_PREFIX, never);
    CHECK(strstr(out, want), "no line for the page never opened in:\n%s", out);
    snprintf(want, sizeof want,
             "mpf-run: reclaimed %s%s: case 'ended_case' of "
             "test_reclaim_pages: 0 shm objects removed\n",
             MPF__PAGE_PREFIX, ended);
    CHECK(strstr(out, want), "no line for the ended case's page in:\n%s", out);
    CHECK(!exists(never) && !exists(ended), "a reclaimed page is still there");
    for (unsigned i = 0; i < sizeof left / sizeof left[0]; i++) {
        CHECK(exists(left[i]), "%s%s was removed", MPF__PAGE_PREFIX, left[i]);
        CHECK(!strstr(out, left[i]), "%s%s was reclaimed", MPF__PAGE_PREFIX,
              left[i]);
    }
    return 0;
}

int main(void)
{
    static const char *const parts[10][3] = {
        { "x", "", "0" },   { "0", "", "0" },   { "2147483648", "", "0" },
        { DEAD, "x", "0" }, { DEAD, "", "x0" }, { DEAD, "", "1" },
        { DEAD, "", "2" },  { DEAD, "", "3" },  { DEAD, "", "4" },
        { DEAD, "", "5" },
    };
    for (int i = 0; i < 10; i++)
        left[i] = named(parts[i][0], parts[i][1], parts[i][2]);
    never = named(DEAD, "", "6");
    ended = named(DEAD, "", "7");
    int rc = reclaim_takes_only_pages_of_dead_runs();
    for (unsigned i = 0; i < n_names; i++)
        unlink(path_of(names[i]));
    puts(rc ? "FAILED" : "ok");
    return rc;
}
