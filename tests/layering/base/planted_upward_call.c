/* SPDX-License-Identifier: MIT */
/*
 * planted_upward_call.c — an offence for ci/cycles.py to find: a file of
 * the fixture's base layer (its folder says so) that calls
 * mpf__check_fds(), which guard/case_fds.c defines, six layers up. It is
 * compiled, never linked: ctest layering.fixture_upward_call_fails reads
 * its symbol table beside the library's objects and expects the check to
 * fail, naming this edge.
 */
typedef struct mpf_report mpf_report;
void mpf__check_fds(mpf_report *r);
void planted_upward_call(mpf_report *r);

void planted_upward_call(mpf_report *r)
{
    mpf__check_fds(r);
}
