/* SPDX-License-Identifier: MIT */
/*
 * self.c — what a process of the tree knows of itself (worker__self: is it
 * a child, its role, its uplink, its cancel flag) and the one way every
 * child leaves (worker__child_exit). The bottom of the layering: the
 * fault points, the tree and the child entry all read it.
 */
#include <unistd.h>

#include "proc.h"

#ifdef MPF_COVERAGE_BUILD
extern void __gcov_dump(void);
extern void __gcov_reset(void);

/* __gcov_dump() alone marks the counters written: later dumps (at _exit's
   dump or at exit) would write nothing more until a reset. */
void worker__coverage_flush(void)
{
    __gcov_dump();
    __gcov_reset();
}
#endif

struct worker__self worker__self = { .uplink_fd = -1, .doorbell_fd = -1 };

bool worker__shutdown_seen(const worker__mailbox *mb)
{
    return worker__mb_load(&mb->frame[0].shutdown) ||
           worker__mb_load(&mb->frame[0].state) == WORKER__MB_SHUTDOWN ||
           worker__self.parent_gone;
}

bool worker__shutdown_requested(const worker__mailbox *mb)
{
    if (worker__shutdown_seen(mb))
        return true;
    if (getppid() == worker__self.ppid_before_fork)
        return false;
    worker__self.parent_gone = 1;
    return true;
}

_Noreturn void worker__child_exit(int code)
{
#ifdef MPF_COVERAGE_BUILD
    /* _exit() skips the atexit hook that writes gcov counters. */
    __gcov_dump();
#endif
    _exit(code);
}
