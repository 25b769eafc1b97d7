/* SPDX-License-Identifier: MIT */
/*
 * fuzz_faults.c — libFuzzer harness of the fault-spec parser
 * (worker__faults_parse() in runtime/src/faults.c, the syntax of
 * worker_options.faults and WORKER_FAULTS). Parse only: no fault point is
 * ever fired, so nothing hangs, exits, signals, forks or creates shm.
 *
 * Oracles: a refused spec says why; a dry run leaves the process table
 * empty; a real parse agrees with the dry run; matching the parsed roles
 * (fnmatch globs) against role paths does not crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[200] = "", msg2[200] = "";
    char *text = malloc(size + 1);
    int rc, rc2;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    worker__faults_reset();
    rc = worker__faults_parse(text, true, msg, sizeof(msg));
    CHECK(rc == 0 || (rc == -EINVAL && msg[0] != '\0'));
    CHECK(!worker__faults_need_gates()); /* dry run: table still empty */
    rc2 = worker__faults_parse(text, false, msg2, sizeof(msg2));
    CHECK(rc2 == rc && strcmp(msg, msg2) == 0);
    if (rc == 0) {
        worker__faults_enter_role("root");
        worker__faults_enter_role("next.1/chip.0");
    }
    worker__faults_reset();
    free(text);
    return 0;
}
