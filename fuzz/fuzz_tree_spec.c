/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tree_spec.c — libFuzzer harness of the tree-spec parser
 * (fakechips/src/tree_spec.c). Parse only: nothing is built, forked
 * or created in /dev/shm.
 *
 * Oracles beyond the sanitizers: a refused spec says why (-EINVAL or
 * -E2BIG with a message); an accepted one is within every limit, its totals
 * match a recount over its items, and the options of every node pass
 * worker_options_validate() — what the parser accepts, worker_new() takes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_spec.h"
#include "fuzz.h"

/* Processes under item i (a node), recounted from the flat list. */
static uint64_t recount(const mpfw__spec *s, unsigned i)
{
    uint64_t n = 0;

    for (unsigned j = i + 1; j < s->n_items; j++) {
        const mpfw__item *it = &s->items[j];

        if (it->parent != (int)i)
            continue;
        CHECK(it->count >= 1);
        n += it->count * (it->kind == MPFW__ITEM_NODE ? 1 + recount(s, j) : 1);
    }
    return n;
}

static void check_accepted(const mpfw__spec *s)
{
    static mpfw__node_children c;

    CHECK(s->n_items >= 1 && s->n_items <= MPFW__SPEC_MAX_ITEMS);
    CHECK(s->items[0].kind == MPFW__ITEM_NODE && s->items[0].parent == -1);
    CHECK(s->depth >= 1 && s->depth <= MPFW_SPEC_MAX_DEPTH);
    CHECK(s->processes <= MPFW_SPEC_MAX_PROCESSES);
    CHECK(recount(s, 0) == s->processes);
    for (unsigned i = 0; i < s->n_items; i++) {
        const mpfw__item *it = &s->items[i];
        worker_options o = WORKER_OPTIONS_INIT;
        char m[256];

        CHECK(it->parent < (int)i);
        if (it->script.msg)
            CHECK(strlen(it->script.msg) < WORKER_ERROR_MAX);
        if (it->kind != MPFW__ITEM_NODE)
            continue;
        mpfw__spec_children(s, i, &c);
        o.level = c.level;
        o.num_subs = c.num_subs;
        o.num_chips = c.num_chips;
        o.sub_scripts = c.num_subs ? c.sub_scripts : NULL;
        o.chip_scripts = c.num_chips ? c.chip_scripts : NULL;
        o.self_script = it->script;
        CHECK(c.num_next <= WORKER_MAX_NEXT);
        CHECK(worker_options_validate(&o, m, sizeof(m)) == 0);
        for (unsigned k = 0; k < c.num_next; k++)
            CHECK(s->items[c.next[k]].level == c.level - 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mpfw__spec spec;
    char err[MPFW_SPEC_MAX_LEN + 512] = "";
    char *text = malloc(size + 1);
    int rc;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    rc = mpfw__spec_parse(&spec, text, err, sizeof(err));
    if (rc == 0)
        check_accepted(&spec);
    else
        CHECK((rc == -EINVAL || rc == -E2BIG) && err[0] != '\0');
    free(text);
    return 0;
}
