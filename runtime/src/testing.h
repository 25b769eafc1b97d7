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

#endif /* WORKER_TESTING_H */
