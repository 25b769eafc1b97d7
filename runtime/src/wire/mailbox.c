/* SPDX-License-Identifier: MIT */
/*
 * mailbox.c — creation of the per-child shared-memory mailbox and the small
 * store/wake helpers both sides use. The layout is in mailbox.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "mailbox.h"

/* Whether the kernel can populate a shared mapping on demand
   (MADV_POPULATE_WRITE, Linux 5.14): an empty range asks without doing
   anything. Asked once a process; threads that race ask twice, alike. */
static bool can_populate(const void *mapped)
{
    static _Atomic int known = -1;
    int v = atomic_load_explicit(&known, memory_order_relaxed);

    if (v < 0) {
        v = madvise((void *)mapped, 0, MADV_POPULATE_WRITE) == 0;
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

int worker__mailbox_create(const char *name, worker__mailbox **ret)
{
    int fd = -1;
    void *p = MAP_FAILED;
    int rc;

    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (ftruncate(fd, WORKER__MAILBOX_SIZE) != 0) {
        rc = -errno;
        goto fail;
    }
    p = mmap(NULL, WORKER__MAILBOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
             0);
    if (p == MAP_FAILED) {
        rc = -errno;
        goto fail;
    }
    /* Reserve now, so that a full tmpfs fails here instead of a SIGBUS at
       the first touch in whichever process gets there first: frame 0 and
       the ring's first page, which the child looks at from its start (to
       read a page of a tmpfs allocates it). The rest at the first task
       (worker__mailbox_have_ring), where the kernel can populate on
       demand; else now too. */
    off_t now = can_populate(p) ? WORKER__MB_RING_OFF + 4096
                                : WORKER__MAILBOX_SIZE;
    rc = posix_fallocate(fd, 0, now);
    if (rc != 0) {
        rc = -rc;
        munmap(p, WORKER__MAILBOX_SIZE);
        goto fail;
    }
    close(fd);

    worker__mailbox *mb = p;
    /* Frame 0 only: the ring and the blob area stay untouched (zero, every
       slot IDLE) until their first task. */
    mb->frame[0].magic = WORKER__MB_MAGIC;
    mb->frame[0].version = WORKER__MB_VERSION;
    /* Nobody else maps it yet; the release only documents intent. */
    worker__mb_store(&mb->frame[0].state, WORKER__MB_IDLE);
    *ret = mb;
    return 0;

fail:
    close(fd);
    shm_unlink(name);
    return rc;
}

int worker__mailbox_have_ring(worker__mailbox *mb)
{
    /* What creation did not reserve: the ring after its first page, and
       the blob area. */
    char *rest = (char *)mb + WORKER__MB_RING_OFF + 4096;
    if (madvise(rest, WORKER__MAILBOX_SIZE - WORKER__MB_RING_OFF - 4096,
                MADV_POPULATE_WRITE) == 0 ||
        errno == EINVAL) /* no such advice: reserved at creation */
        return 0;
    /* EFAULT: a SIGBUS it would have been, the tmpfs is full. */
    return errno == EFAULT ? -ENOSPC : -errno;
}

bool worker__mailbox_keep_from_forks(worker__mailbox *mb)
{
    return madvise(mb, WORKER__MAILBOX_SIZE, MADV_DONTFORK) == 0;
}

void worker__mailbox_unmap(worker__mailbox *mb)
{
    if (mb)
        munmap(mb, WORKER__MAILBOX_SIZE);
}

int worker__mailbox_check(const worker__mailbox *mb)
{
    return mb->frame[0].magic == WORKER__MB_MAGIC &&
           mb->frame[0].version == WORKER__MB_VERSION;
}

static void write_error(int32_t *error, char *field, int32_t code,
                        const char *msg)
{
    size_t n = msg ? strnlen(msg, WORKER__MB_MSG_SIZE - 1) : 0;

    *error = code;
    if (n)
        memcpy(field, msg, n);
    memset(field + n, 0, WORKER__MB_MSG_SIZE - n);
}

void worker__mb_write_error(worker__mb_frame *f, int32_t code, const char *msg)
{
    write_error(&f->error, f->msg, code, msg);
}

void worker__mb_slot_write_error(worker__mb_slot *s, int32_t code,
                                 const char *msg)
{
    write_error(&s->error, s->msg, code, msg);
}

void worker__mb_ring_child(worker__mailbox *mb)
{
    atomic_fetch_add_explicit(&mb->frame[0].bell, 1, memory_order_release);
    worker__futex_wake(&mb->frame[0].bell, 1);
}

bool worker__mb_wake_parked_child(worker__mailbox *mb)
{
    /* TASK_READY was release-stored before; this fence pairs with the
       child's between its store of `parked` and its look at the slot
       (mailbox.h: one of the two sides sees the other's store). Taking
       the word back to 0 makes the later puts of the same wake-up ring
       no more: the child is woken once, however many tasks follow. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&mb->frame[0].parked, memory_order_relaxed) ||
        !atomic_exchange_explicit(&mb->frame[0].parked, 0,
                                  memory_order_relaxed))
        return false;
    worker__mb_ring_child(mb);
    return true;
}

void worker__mb_send_shutdown(worker__mailbox *mb, int64_t by_ns)
{
    /* Before the sticky word, which publishes it. A later SHUTDOWN (close
       after a poison) may only bring the deadline nearer. */
    int64_t was = atomic_load_explicit(&mb->frame[0].close_by_ns,
                                       memory_order_relaxed);
    if (by_ns > 0 && (was == 0 || by_ns < was))
        atomic_store_explicit(&mb->frame[0].close_by_ns, by_ns,
                              memory_order_relaxed);
    /* Sticky word first: a child sampling between the two stores already
       sees it, and no later writer of the state word can undo it. */
    worker__mb_store(&mb->frame[0].shutdown, 1);
    worker__mb_store(&mb->frame[0].state, WORKER__MB_SHUTDOWN);
    worker__mb_ring_child(mb);
}
