/* SPDX-License-Identifier: MIT */
/*
 * rt_table.h — same-shape cases as rows of a table (header-only, for the
 * runtime's suites and the stress suites that share their helpers).
 *
 * One body, one row per case, and each row still its own guarded case and
 * its own ctest test, named by the row: kselftest_harness.h's
 * FIXTURE_VARIANT in cmocka's terms. The row is the case's state (what
 * mpf_unit_test() keeps in struct mpf_case_spec), so the body reads it as
 * `*state`; the trees a row builds are closed by mpfw_case_teardown, as
 * for mpfw_unit_test().
 *
 * A row type's first member is its name, `const char *name` (each suite
 * asserts it at compile time with RT_ROW_NAME_FIRST).
 */
#ifndef RT_TABLE_H
#define RT_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfixture/cmocka.h>
#include <mpfixture/fakechips.h>

struct rt_table {
    const void *rows; /* the first row; each row starts with its name */
    size_t n;         /* number of rows */
    size_t row_size;  /* sizeof one row */
    CMUnitTestFunction body;
    unsigned budget_ms; /* every row's budget, as in mpfw_unit_test() */
};

/* The table of a file-scope array of rows, run by body. */
#define RT_TABLE(rows_, body_, budget_ms_)                               \
    {                                                                    \
        (rows_), sizeof(rows_) / sizeof((rows_)[0]), sizeof((rows_)[0]), \
            (body_), (budget_ms_)                                        \
    }

#define RT_ROW_NAME_FIRST(row_type)                                \
    _Static_assert(offsetof(row_type, name) == 0,                  \
                   #row_type ": a row's first member is its name " \
                             "(rt_table.h)")

/* The row a table case runs (its state). */
#define rt_row(state) ((const void *)*(state))

/*
 * mpf_run_group_tests() over the cases of `fixed` followed by one case per
 * row of each table. Returns the number of failed cases, or 1 if the
 * list could not be built (out of memory), so the run fails.
 */
static inline int rt_run_tests_and_tables(const char *group,
                                          const struct CMUnitTest *fixed,
                                          size_t n_fixed,
                                          const struct rt_table *tables,
                                          size_t n_tables)
{
    size_t n = n_fixed, k = n_fixed;
    for (size_t t = 0; t < n_tables; t++)
        n += tables[t].n;
    struct CMUnitTest *tests = calloc(n, sizeof(*tests));
    struct mpf_case_spec *specs = calloc(n, sizeof(*specs));
    if (!tests || !specs) {
        fprintf(stderr, "%s: cannot build the list of cases: out of memory\n",
                group);
        free(tests);
        free(specs);
        return 1;
    }
    if (n_fixed)
        memcpy(tests, fixed, n_fixed * sizeof(*tests));
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].n; i++, k++) {
            const void *row = (const char *)tables[t].rows +
                              i * tables[t].row_size;
            /* The spec's state is a void *; the row stays read-only
               (bodies take it back as const through rt_row()). */
            specs[k] = (struct mpf_case_spec){ MPF_CASE_SPEC_MAGIC,
                                               tables[t].budget_ms,
                                               (void *)row };
            tests[k] = (struct CMUnitTest){ *(const char *const *)row,
                                            tables[t].body, NULL,
                                            mpfw_case_teardown, &specs[k] };
        }
    int failed = mpf__run_group_tests(group, tests, n, NULL, NULL);
    free(tests);
    free(specs);
    return failed;
}

#define rt_run_group_tests(fixed, tables)                                      \
    rt_run_tests_and_tables(#fixed, fixed, sizeof(fixed) / sizeof((fixed)[0]), \
                            tables, sizeof(tables) / sizeof((tables)[0]))

#endif /* RT_TABLE_H */
