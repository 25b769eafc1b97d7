/* SPDX-License-Identifier: MIT */
/*
 * devmem.c — device memory of simulated chips, parent side.
 *
 * The chip owns its memory: an allocation is a control command (DEV_ALLOC)
 * that makes the chip create a shm region "<chip mailbox>.dev.<id>", so
 * each allocation is one named /dev/shm object created by the chip process
 * (a leak checker can attribute it). The parent then maps the same region
 * by name for copies. A free is a DEV_FREE command (the chip unmaps and
 * unlinks); when the chip is gone the parent unlinks the name itself.
 *
 * Region 0 is the chip's base memory ("<chip mailbox>.dev"), mapped by the
 * parent on the first copy.
 *
 * The parent's table (w->regions) is guarded by w->mu; copies run outside
 * the lock on a snapshot of the mapping (a copy racing a free of the same
 * region is the caller's bug, as with any device API).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child/child.h"
#include "dispatch.h"

static struct worker__child *chip_child(worker *w, unsigned chip)
{
    if (chip >= w->opt.num_chips)
        return NULL;
    return worker__find_child(w, WORKER_CHILD_CHIP, chip);
}

static int map_region(const char *name, size_t size, void **map)
{
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    void *p;
    int rc = 0;

    if (fd < 0)
        return -errno;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        rc = -errno;
    else
        *map = p;
    close(fd);
    return rc;
}

/* mu held. */
static struct worker__region *find_region(worker *w, unsigned chip, uint32_t id)
{
    for (size_t i = 0; i < w->n_regions; i++)
        if (w->regions[i].chip == chip && w->regions[i].id == id)
            return &w->regions[i];
    return NULL;
}

/* mu held. */
static struct worker__region *add_region(worker *w)
{
    if (w->n_regions == w->cap_regions) {
        size_t cap = w->cap_regions ? 2 * w->cap_regions : 16;
        void *p = realloc(w->regions, cap * sizeof(*w->regions));
        if (!p)
            return NULL;
        w->regions = p;
        w->cap_regions = cap;
    }
    memset(&w->regions[w->n_regions], 0, sizeof(*w->regions));
    return &w->regions[w->n_regions++];
}

static void region_name(const struct worker__child *c, uint32_t id, char *buf,
                        size_t size)
{
    if (id == 0)
        worker__fmt(buf, size, "%s", c->dev_name);
    else
        worker__fmt(buf, size, "%s.%u", c->dev_name, id);
}

WORKER__EXPORT int worker_device_alloc(worker *w, unsigned chip, size_t size,
                                       worker_devptr *out)
{
    struct worker__child *c;
    struct worker__region *r;
    char msg[WORKER_ERROR_MAX], name[WORKER__NAME_MAX + 24];
    uint64_t id = 0;
    void *map = NULL;
    int rc;

    if (!w || !out)
        return -EINVAL;
    if (size == 0 || size > WORKER_DEVICE_ALLOC_MAX) {
        worker__set_error(w, "device_alloc: %zu bytes (must be 1..%u)", size,
                          WORKER_DEVICE_ALLOC_MAX);
        return -EINVAL;
    }
    if ((rc = worker__admit(w, "device_alloc")))
        return rc;
    if (!(c = chip_child(w, chip))) {
        worker__set_error(w, "device_alloc: no chip %u (the worker has %u)",
                          chip, w->opt.num_chips);
        return -EINVAL;
    }
    rc = worker__control(w, c, WORKER__CTRL_DEV_ALLOC, size, 0, &id, msg,
                         sizeof(msg));
    if (rc) {
        worker__set_error(w, "device_alloc: %s", msg);
        return rc;
    }
    region_name(c, (uint32_t)id, name, sizeof(name));
    if ((rc = map_region(name, size, &map))) {
        char m2[WORKER_ERROR_MAX];
        worker__control(w, c, WORKER__CTRL_DEV_FREE, id, 0, NULL, m2,
                        sizeof(m2));
        worker__set_error(w, "device_alloc: map %s: %s", name, strerror(-rc));
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    r = add_region(w);
    if (r) {
        r->chip = chip;
        r->id = (uint32_t)id;
        r->size = size;
        r->map = map;
        snprintf(r->name, sizeof(r->name), "%s", name);
    }
    pthread_mutex_unlock(&w->mu);
    if (!r) {
        char m2[WORKER_ERROR_MAX];
        munmap(map, size);
        worker__control(w, c, WORKER__CTRL_DEV_FREE, id, 0, NULL, m2,
                        sizeof(m2));
        worker__set_error(w, "device_alloc: out of memory");
        return -ENOMEM;
    }
    *out = WORKER_DEVPTR(id, 0);
    return 0;
}

WORKER__EXPORT int worker_device_free(worker *w, unsigned chip, worker_devptr p)
{
    struct worker__region r;
    struct worker__child *c;
    char msg[WORKER_ERROR_MAX];
    uint32_t id = WORKER_DEVPTR_REGION(p);
    bool found = false, chip_live;

    if (!w)
        return -EINVAL;
    if (id == 0 || WORKER_DEVPTR_OFFSET(p) != 0) {
        worker__set_error(w, "device_free: %#llx is not an allocation's start",
                          (unsigned long long)p);
        return -EINVAL;
    }
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n_regions; i++)
        if (w->regions[i].chip == chip && w->regions[i].id == id) {
            r = w->regions[i];
            w->regions[i] = w->regions[--w->n_regions];
            found = true;
            break;
        }
    c = found ? chip_child(w, chip) : NULL;
    chip_live = c && !c->poisoned && !c->reaped && w->sched_running &&
                atomic_load(&w->state) == WORKER_READY;
    pthread_mutex_unlock(&w->mu);
    if (!found) {
        worker__set_error(w, "device_free: chip %u has no allocation %u", chip,
                          id);
        return -EINVAL;
    }
    if (r.map)
        munmap(r.map, r.size);
    /* Ask the chip, so its own table stays exact; if it cannot answer (gone,
       poisoned, closed), the name is released here. */
    if (!chip_live || worker__control(w, c, WORKER__CTRL_DEV_FREE, id, 0, NULL,
                                      msg, sizeof(msg)))
        shm_unlink(r.name);
    return 0;
}

/* Resolve [p, p + n) of chip's memory to a host pointer in the parent. */
static int span(worker *w, unsigned chip, worker_devptr p, size_t n,
                uint8_t **host)
{
    struct worker__child *c;
    struct worker__region *r;
    uint32_t id = WORKER_DEVPTR_REGION(p);
    size_t off = WORKER_DEVPTR_OFFSET(p);
    int rc = 0;

    pthread_mutex_lock(&w->mu);
    c = chip_child(w, chip);
    r = find_region(w, chip, id);
    if (!r && id == 0 && c && c->mb) {
        /* The base memory, mapped on first use. */
        char name[WORKER__NAME_MAX + 24];
        void *map = NULL;

        region_name(c, 0, name, sizeof(name));
        rc = map_region(name, w->opt.chip_memory_bytes, &map);
        if (!rc && !(r = add_region(w))) {
            munmap(map, w->opt.chip_memory_bytes);
            rc = -ENOMEM;
        }
        if (!rc) {
            r->chip = chip;
            r->id = 0;
            r->size = w->opt.chip_memory_bytes;
            r->map = map;
            snprintf(r->name, sizeof(r->name), "%s", name);
        }
    }
    if (!rc && (!r || !r->map))
        rc = -EINVAL;
    if (!rc && (off > r->size || n > r->size - off))
        rc = -ERANGE;
    if (!rc)
        *host = (uint8_t *)r->map + off;
    pthread_mutex_unlock(&w->mu);
    if (rc == -EINVAL)
        worker__set_error(w, "device copy: chip %u has no region %u", chip, id);
    else if (rc == -ERANGE) {
        worker__set_error(w,
                          "device copy: [%zu, +%zu) out of region %u of chip "
                          "%u",
                          off, n, id, chip);
        rc = -EINVAL;
    } else if (rc)
        worker__set_error(w, "device copy: map: %s", strerror(-rc));
    return rc;
}

static int copy_admit(worker *w)
{
    return worker__admit(w, "device copy");
}

/* The checks of a copy of n bytes between the caller's buffer and device
   memory at p: *host is the device side, mapped in the parent. */
static int copy_span(worker *w, unsigned chip, worker_devptr p, const void *buf,
                     size_t n, uint8_t **host)
{
    int rc;

    if (!w || (n && !buf))
        return -EINVAL;
    if ((rc = copy_admit(w)))
        return rc;
    return span(w, chip, p, n, host);
}

WORKER__EXPORT int worker_device_copy_to(worker *w, unsigned chip,
                                         worker_devptr dst, const void *src,
                                         size_t n)
{
    uint8_t *host;
    int rc = copy_span(w, chip, dst, src, n, &host);

    if (!rc && n) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(host, src, n);
    return rc;
}

WORKER__EXPORT int worker_device_copy_from(worker *w, unsigned chip, void *dst,
                                           worker_devptr src, size_t n)
{
    uint8_t *host;
    int rc = copy_span(w, chip, src, dst, n, &host);

    if (!rc && n) /* memcpy to NULL is undefined even for 0 bytes */
        memcpy(dst, host, n);
    return rc;
}

WORKER__EXPORT size_t worker_device_allocations(const worker *w)
{
    size_t n = 0;

    if (!w || !w->mu_ready)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&w->mu);
    for (size_t i = 0; i < w->n_regions; i++)
        if (w->regions[i].id != 0)
            n++;
    pthread_mutex_unlock((pthread_mutex_t *)&w->mu);
    return n;
}

size_t worker__devmem_protect(worker *w, const char **names, size_t max)
{
    size_t n = 0;

    if (w->opt.device_leaks != WORKER_DEVICE_LEAKS_KEEP)
        return 0;
    for (size_t i = 0; i < w->n_regions && n < max; i++)
        if (w->regions[i].id != 0)
            names[n++] = w->regions[i].name;
    return n;
}

void worker__devmem_close(worker *w, char *msg, size_t msg_size)
{
    bool keep = w->opt.device_leaks == WORKER_DEVICE_LEAKS_KEEP;
    size_t n = 0, bytes = 0, keep_n = 0, off = strlen(msg);
    char names[200] = "";
    size_t noff = 0;

    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n_regions; i++) {
        struct worker__region *r = &w->regions[i];

        if (r->id == 0) {
            if (r->map)
                munmap(r->map, r->size);
            continue;
        }
        n++;
        bytes += r->size;
        if (noff < sizeof(names) - 1)
            noff += (size_t)snprintf(names + noff, sizeof(names) - noff, "%s%s",
                                     noff ? ", " : "", r->name);
        if (keep) {
            /* Left for the leak checker; worker_device_free() still works. */
            w->regions[keep_n++] = *r;
            continue;
        }
        if (r->map)
            munmap(r->map, r->size);
        shm_unlink(r->name); /* normally gone with the chip already */
    }
    w->n_regions = keep_n;
    pthread_mutex_unlock(&w->mu);
    if (n && off < msg_size - 1)
        snprintf(msg + off, msg_size - off,
                 "%sdevice memory not freed by the caller: "
                 "%zu region(s), %zu bytes (%s): %s",
                 off ? "; " : "", n, bytes,
                 keep ? "left in /dev/shm" : "reclaimed", names);
}

void worker__devmem_free_all(worker *w)
{
    for (size_t i = 0; i < w->n_regions; i++)
        if (w->regions[i].map)
            munmap(w->regions[i].map, w->regions[i].size);
    free(w->regions);
    w->regions = NULL;
    w->n_regions = w->cap_regions = 0;
}
