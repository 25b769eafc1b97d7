/* SPDX-License-Identifier: MIT */
/*
 * planted_upward_call.c — an offence for ci/cycles.py to find: a file of
 * the runtime's wire layer (its folder says so) that calls worker_init(),
 * which the lifecycle at the top of the layers defines. It is compiled,
 * never linked: ctest layering.runtime_upward_call_fails reads its symbol
 * table beside the library's objects and expects the check to fail,
 * naming this edge.
 */
struct worker;
int worker_init(struct worker *w);
int planted_upward_call(struct worker *w);

int planted_upward_call(struct worker *w)
{
    return worker_init(w);
}
