/* SPDX-License-Identifier: MIT */
/*
 * check.h — CHECK(cond, format, ...) for the plain C tests that judge
 * themselves without cmocka (they print "ok" at the end): when cond is
 * false, the line and the message go to stderr and the calling function
 * returns 1.
 */
#ifndef MPF_TESTS_CHECK_H
#define MPF_TESTS_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stderr, "line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);           \
            fprintf(stderr, "\n");                  \
            return 1;                               \
        }                                           \
    } while (0)

#endif
