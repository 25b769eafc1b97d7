/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h — what every harness of fuzz/ shares: libFuzzer's entry point
 * and CHECK, an oracle that stops the run on a wrong answer (a crash
 * libFuzzer keeps as a reproducer), compiled in whatever the build type.
 */
#ifndef MPF_FUZZ_H
#define MPF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)              \
    do {                      \
        if (!(c))             \
            __builtin_trap(); \
    } while (0)

#endif /* MPF_FUZZ_H */
