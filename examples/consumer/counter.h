/* SPDX-License-Identifier: MIT */
/*
 * counter.h — a tiny multi-process program: N worker processes add to one
 * counter in POSIX shared memory.
 */
#ifndef COUNTER_H
#define COUNTER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Create the shm object `name` holding a counter, fork `workers` processes
   that each add 1 to it `adds` times, reap them all and return the total
   (negative errno on failure). The object stays: counter_remove() it. */
long counter_run(const char *name, int workers, int adds);

/* Unlink the shm object of counter_run(). */
int counter_remove(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* COUNTER_H */
