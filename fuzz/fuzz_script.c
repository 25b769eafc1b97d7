/* SPDX-License-Identifier: MIT */
/*
 * fuzz_script.c — libFuzzer harness of the per-child script parser
 * (worker_script_parse() in runtime/src/lifecycle.c). Parse only.
 *
 * The input is passed as is, in a buffer of exactly its size (no NUL after
 * it), so a read past `len` is an ASan report. Oracles: a refused script
 * says why and leaves *out untouched; an accepted one has its number in
 * range, its message inside the input and under WORKER_ERROR_MAX, and
 * passes worker_options_validate() as the script of a sub child.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpfixture/worker.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const worker_script sentinel = { WORKER_SCRIPT_KIND_COUNT, -1, "sentinel" };
    worker_script s = sentinel;
    char err[256] = "", msg[WORKER_ERROR_MAX];
    size_t msg_len = (size_t)-1;
    char *text = malloc(size ? size : 1);
    int rc;

    if (!text)
        return 0;
    memcpy(text, data, size);
    rc = worker_script_parse(text, size, &s, &msg_len, err, sizeof(err));
    if (rc) {
        CHECK(rc == -EINVAL && err[0] != '\0');
        CHECK(memcmp(&s, &sentinel, sizeof(s)) == 0);
    } else {
        worker_options o = WORKER_OPTIONS_INIT;
        char m[256];

        CHECK((unsigned)s.kind < WORKER_SCRIPT_KIND_COUNT);
        if (s.kind == WORKER_SCRIPT_EXIT)
            CHECK(s.arg >= 0 && s.arg <= WORKER_SCRIPT_EXIT_MAX);
        if (s.kind == WORKER_SCRIPT_SLOW_FAIL)
            CHECK(s.arg >= 0 && s.arg <= WORKER_SCRIPT_DELAY_MAX_MS);
        if (s.msg) {
            CHECK(s.kind == WORKER_SCRIPT_FAIL);
            CHECK(msg_len > 0 && msg_len < WORKER_ERROR_MAX);
            CHECK(s.msg >= text && s.msg + msg_len <= text + size);
            CHECK(memchr(s.msg, '\0', msg_len) == NULL);
            memcpy(msg, s.msg, msg_len);
            msg[msg_len] = '\0';
            s.msg = msg;
        } else {
            CHECK(msg_len == 0);
        }
        o.num_subs = 1;
        o.sub_scripts = &s;
        CHECK(worker_options_validate(&o, m, sizeof(m)) == 0);
    }
    free(text);
    return 0;
}
