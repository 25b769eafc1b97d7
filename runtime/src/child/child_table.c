/* SPDX-License-Identifier: MIT */
/*
 * child_table.c — a worker's children by kind and index, and the stable
 * prefix of their error messages (simpler's "sub_worker: ", "chip dev=N: ",
 * "child_worker level=L: ").
 */
#include "child.h"

void worker__child_prefix(const worker *w, const struct worker__child *c,
                          char *buf, size_t size)
{
    switch (c->kind) {
    case WORKER_CHILD_SUB:
        worker__fmt(buf, size, "sub_worker: ");
        break;
    case WORKER_CHILD_CHIP:
        worker__fmt(buf, size, "chip dev=%u: ", c->index);
        break;
    case WORKER_CHILD_NEXT:
        worker__fmt(buf, size, "child_worker level=%d: ",
                    c->nested ? c->nested->opt.level : w->opt.level - 1);
        break;
    }
}

struct worker__child *worker__find_child(worker *w, worker_child_kind kind,
                                         unsigned index)
{
    for (size_t i = 0; i < w->n_children; i++) {
        struct worker__child *c = &w->children[i];
        if (c->kind == kind && c->index == index &&
            c->cstate != WORKER__C_EMPTY)
            return c;
    }
    return NULL;
}
