/* SPDX-License-Identifier: MIT */
/*
 * wire.h — what the processes of a tree share besides their mailboxes
 * (wire/mailbox.h): the shm names of a tree and their sweep (shm.c), the
 * gate words of deterministic interleavings (gates.c).
 */
#ifndef WORKER_WIRE_H
#define WORKER_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "mpfixture/worker.h"

/* shm.c: the namespace of a worker, the sweep of a prefix. */
int worker__ns_init(worker *w);
int worker__shm_sweep(const char *prefix, const char *const *protect,
                      size_t n_protect);

/* gate_wait action (gates.c). */
void worker__gate_wait(worker_gates *g, unsigned i);
bool worker__gate_is_open(const worker_gates *g, unsigned i);

#endif /* WORKER_WIRE_H */
