/* SPDX-License-Identifier: MIT */
/*
 * testing.h — calls of libworker for its own tests only: exported so that
 * the test binaries can link them, declared here rather than in the
 * installed worker.h, and not part of the API.
 */
#ifndef WORKER_TESTING_H
#define WORKER_TESTING_H

#include "mpfixture/worker.h"

/* Base-frame state word of a live child's mailbox (MailboxState), for
   tests of the wire protocol; -ENOENT if the child has no mailbox. */
int worker_child_mailbox_state(const worker *w, worker_child_kind kind,
                               unsigned index);

/* How many times the dispatcher rang a live child's bell for tasks: it
   rings only a child parked on an empty ring, so a batch of queued tasks
   costs one wake-up. -ENOENT if there is no such child. */
int64_t worker_child_task_wakeups(worker *w, worker_child_kind kind,
                                  unsigned index);

/* The fault-spec parser (faults.h), exported for its libFuzzer harness
   (fuzz/fuzz_faults.c), which drives exactly the library's parser:
     worker__faults_parse, worker__faults_reset, worker__faults_need_gates,
     worker__faults_enter_role
   Nothing else named worker__ is exported; the wire-format tests compile
   wire/mailbox.c themselves. */

#endif /* WORKER_TESTING_H */
