/* SPDX-License-Identifier: MIT */
/*
 * children.h — the one reader of /proc/<pid>/task/<tid>/children: the
 * pids a thread forked that are still its children (zombies included),
 * separated by spaces. The library reads it to find the members of a
 * swept process group re-parented to it (tree/reap.c); tests read it to
 * see a process tree. Header-only, so the tests (which cannot link the
 * library's hidden symbols) run the very same code.
 *
 * Not for a signal handler (snprintf, strtol, opendir): the fixture keeps
 * its own async-signal-safe reader (fixture/src/census.c).
 */
#ifndef WORKER_PROC_CHILDREN_H
#define WORKER_PROC_CHILDREN_H

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* The pids of a children file's text, at most max of them into out; the
   number stored. */
static inline size_t worker__children_parse(const char *text, pid_t *out,
                                            size_t max)
{
    size_t n = 0;

    for (const char *p = text; *p && n < max;) {
        char *end;
        long pid = strtol(p, &end, 10);

        if (end == p)
            break;
        out[n++] = (pid_t)pid;
        p = end;
    }
    return n;
}

/* "/proc/<pid>" into buf, "/proc/self" for pid 0 (the calling process,
   also where /proc belongs to another pid namespace). */
static inline void worker__children_proc_dir(pid_t pid, char *buf, size_t size)
{
    if (pid == 0)
        snprintf(buf, size, "/proc/self");
    else
        snprintf(buf, size, "/proc/%d", (int)pid);
}

/* The children of thread tid of process pid (0: this process), at most
   max into out; the number stored, 0 if the file cannot be read. */
static inline size_t worker__children_of_thread(pid_t pid, pid_t tid,
                                                pid_t *out, size_t max)
{
    char dir[32], path[96], buf[4096];
    int fd;
    ssize_t len;

    worker__children_proc_dir(pid, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/task/%d/children", dir, (int)tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    len = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (len <= 0)
        return 0;
    buf[len] = '\0';
    return worker__children_parse(buf, out, max);
}

/* The children of every thread of process pid (0: this process), at most
   max into out; the number stored. */
static inline size_t worker__children_of_process(pid_t pid, pid_t *out,
                                                 size_t max)
{
    char dir[32], path[48];
    struct dirent *e;
    size_t n = 0;
    DIR *d;

    worker__children_proc_dir(pid, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/task", dir);
    if (!(d = opendir(path)))
        return 0;
    while (n < max && (e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);

        if (tid > 0)
            n += worker__children_of_thread(pid, (pid_t)tid, out + n, max - n);
    }
    closedir(d);
    return n;
}

#endif /* WORKER_PROC_CHILDREN_H */
