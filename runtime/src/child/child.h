/* SPDX-License-Identifier: MIT */
/*
 * child.h — one child of a worker: its entry in the forked process
 * (child.c) and its record in the parent, by kind and index, with the
 * prefix of its errors (child_table.c).
 */
#ifndef WORKER_CHILD_H
#define WORKER_CHILD_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

/* child_table.c */
/* The kind prefix of error text from child c: "sub_worker: ",
   "chip dev=N: ", "child_worker level=L: ". */
void worker__child_prefix(const worker *w, const struct worker__child *c,
                          char *buf, size_t size);
struct worker__child *worker__find_child(worker *w, worker_child_kind kind,
                                         unsigned index);

/* What the fork of one child of a group gave the parent (tree/fork.c):
   its mailbox (made just before the fork), its pid, its exit descriptor
   (a pidfd, or an exit pipe's read end), whether it leads its process
   group and whether its mailbox is kept from later forks. The parent
   keeps a group's entries in an array on its stack, and puts them into
   the children's records after the group's last fork; a child of the
   group finds its own mailbox and its earlier siblings' in its copy of
   that array. */
struct worker__spawned {
    worker__mailbox *mb;
    pid_t pid;
    int pidfd;
    bool leader;
    bool mb_kept;
};
/* The largest group: the children of one kind. */
#define WORKER__GROUP_MAX WORKER_MAX_SUBS
_Static_assert(WORKER_MAX_CHIPS <= WORKER__GROUP_MAX &&
                   WORKER_MAX_NEXT <= WORKER__GROUP_MAX,
               "a group of any kind fits");

/* child.c */
/* The child of c's fork, entry `at` of its group (its own mailbox, and
   its earlier siblings' descriptors, are there). */
_Noreturn void worker__child_main(worker *parent, struct worker__child *c,
                                  const struct worker__spawned *group,
                                  size_t at, pid_t ppid_before_fork);
void worker__child_signals_to_reset(sigset_t *set);

#endif /* WORKER_CHILD_H */
