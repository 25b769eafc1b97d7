/* SPDX-License-Identifier: MIT */
/*
 * reap.c — reaping a worker's children: peek (WNOWAIT) then reap, so a
 * leader's zombie pins its process group while the group is swept; wait
 * for a set of children against a deadline; reap the members of swept
 * groups that were re-parented to us; SIGKILL one that is still ours.
 * Never a signal to a reaped pid (proc/procfd.c).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "proc/children.h"
#include "proc/proc.h"
#include "tree.h"

/*
 * Reap c if it has exited. The WNOWAIT peek leaves the zombie in place, so
 * the leader sweep (killpg of its group: grandchildren it left behind) is
 * sent while the zombie still pins the group id.
 */
bool worker__try_reap(worker *w, struct worker__child *c)
{
    siginfo_t si;

    if (c->reaped)
        return true;
    memset(&si, 0, sizeof(si));
    if (worker__procfd_waitid(c->pidfd, c->pid, &si,
                              WEXITED | WNOHANG | WNOWAIT) < 0) {
        if (errno == EINTR)
            return false;
        /* ECHILD: someone else reaped it (a waitpid(-1) of the program). */
        c->wait_status = -1;
        goto reaped;
    }
    if (si.si_pid == 0)
        return false;
    {
        char m[64];
        if (WORKER__FAULT(WORKER__FP_REAP, m, sizeof(m))) {
            c->reap_blocked = true; /* injected: "not reapable yet" */
            return false;
        }
    }
    if (c->leader) {
        killpg(c->pid, SIGKILL);
        if (w->n_orphan_groups < WORKER_MAX_CHILDREN)
            w->orphan_groups[w->n_orphan_groups++] = c->pid;
    }
    memset(&si, 0, sizeof(si));
    if (worker__procfd_waitid(c->pidfd, c->pid, &si, WEXITED | WNOHANG) < 0 ||
        si.si_pid == 0)
        return false; /* EINTR; the peek said it is there, retry next pass */
    c->wait_status = worker__status_from_siginfo(&si);
reaped:
    close(c->pidfd);
    c->pidfd = -1;
    c->reaped = true;
    return true;
}

/* Reap every child of the set that exits before the deadline. Returns the
   number still unreaped. Every child is tried once; then only those whose
   exit descriptor turned readable (all again after an EINTR): a pass over
   the whole set at each exit made a set of n children cost n * n waitid
   peeks. */
size_t worker__wait_reap(worker *w, struct worker__child **set, size_t n,
                         int64_t deadline)
{
    struct pollfd pfd[WORKER__TREE_MAX_WAIT];
    struct worker__child *who[WORKER__TREE_MAX_WAIT];
    size_t left = n, blocked = 0;
    int ready = -1; /* as after an EINTR: try them all */

    for (size_t i = 0; i < n; i++)
        who[i] = set[i];
    for (;;) {
        size_t kept = 0;

        for (size_t i = 0; i < left; i++) {
            struct worker__child *c = who[i];

            if (ready < 0 || pfd[i].revents) {
                c->reap_blocked = false;
                if (worker__try_reap(w, c))
                    continue;
                if (c->reap_blocked) {
                    /* Exited but held by a fault: polling its readable
                       pidfd would spin. It stays unreaped for this wait. */
                    blocked++;
                    continue;
                }
            }
            pfd[kept].fd = c->pidfd;
            pfd[kept].events = POLLIN;
            pfd[kept].revents = 0;
            who[kept++] = c;
        }
        left = kept;
        if (left == 0)
            return blocked;
        int64_t now = worker__now_ns();
        if (now >= deadline)
            return left + blocked;
        struct timespec ts = { (deadline - now) / 1000000000,
                               (deadline - now) % 1000000000 };
        ready = ppoll(pfd, left, &ts, NULL); /* EINTR: try them all */
    }
}

/* One of our own children that is in process group pgid, or 0. Such a
   process is a member the group kill orphaned and the kernel re-parented
   to us (we are a child subreaper, e.g. under the fixture). */
static pid_t find_child_in_group(pid_t pgid)
{
    pid_t kids[WORKER__TREE_MAX_KIDS];
    size_t n = worker__children_of_process(0, kids, WORKER__TREE_MAX_KIDS);

    for (size_t i = 0; i < n; i++)
        /* Our child: its pid cannot be recycled before we reap it. */
        if (kids[i] > 0 && getpgid(kids[i]) == pgid)
            return kids[i];
    return 0;
}

/* Reap the members of group pgid that were re-parented to us, SIGKILLing
   the group again while one lives. True when none of ours is left in it;
   false when one still lived at the deadline (a SIGKILLed process can take
   seconds to die on a loaded machine) or could not be waited for. */
static bool reap_group(pid_t pgid, int64_t deadline)
{
    for (;;) {
        siginfo_t si;

        memset(&si, 0, sizeof(si));
        if (waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG) < 0) {
            if (errno == EINTR)
                continue;
            return true; /* ECHILD: no child of ours left in that group */
        }
        if (si.si_pid)
            continue;
        pid_t member = find_child_in_group(pgid);
        if (!member)
            return true;
        if (worker__now_ns() >= deadline)
            return false;
        killpg(pgid, SIGKILL); /* our child pins the group id */
        if (worker__pidfd_missing()) {
            /* No pidfds (valgrind): SIGKILLed, our child, it ends. */
            while (waitid(P_PID, (id_t)member, &si, WEXITED) < 0 &&
                   errno == EINTR)
                ;
            continue;
        }
        int fd = pidfd_open(member, 0);
        if (fd < 0)
            return false;
        struct pollfd p = { fd, POLLIN, 0 };
        int64_t left = deadline - worker__now_ns();
        if (left > 0) {
            struct timespec ts = { left / 1000000000, left % 1000000000 };
            ppoll(&p, 1, &ts, NULL);
        }
        close(fd);
    }
}

/* Reap the members of the recorded groups that were re-parented to us. A
   group with a member still alive stays recorded: the next reap (the
   close after a rollback) waits for it again, and a close does not
   converge while it lives. */
void worker__reap_orphans(worker *w, int64_t deadline)
{
    size_t kept = 0;

    for (size_t g = 0; g < w->n_orphan_groups; g++)
        if (!reap_group(w->orphan_groups[g], deadline))
            w->orphan_groups[kept++] = w->orphan_groups[g];
    w->n_orphan_groups = kept;
}

void worker__send_kill(worker *w, struct worker__child *c)
{
    if (c->reaped || worker__try_reap(w, c))
        return;
    /* Unreaped by us and (per the peek in try_reap) not reaped elsewhere:
       the leader pins its group id, so the group is ours. */
    if (c->leader)
        killpg(c->pid, SIGKILL);
    worker__procfd_signal(c->pidfd, c->pid, SIGKILL);
    c->sigkill_sent = true;
}
