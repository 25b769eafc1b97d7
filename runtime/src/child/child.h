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

/* child.c */
_Noreturn void worker__child_main(worker *parent, struct worker__child *c,
                                  pid_t ppid_before_fork);
void worker__child_signals_to_reset(sigset_t *set);

#endif /* WORKER_CHILD_H */
