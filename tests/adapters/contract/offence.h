/* SPDX-License-Identifier: MIT */
/*
 * offence.h — the one deed every adapter's contract program does in its
 * test (tests/fixture/verdict_tables/adapter_contract.py), chosen by
 * CONTRACT_DEED:
 *   (unset)      the offence: the test leaves /dev/shm/mpf-contract-<pid>
 *                and, when CONTRACT_EXPECTED is set, declares it with
 *                mpf_expect(); it passes either way on its own.
 *   server_exit  a forked server child ends through exit(0) in a helper
 *                below the body: no offence; the test fails on its own
 *                unless its waitpid() sees the child's own status, 0.
 *   escape       a forked child returns from the body (this function
 *                returns 0 in it, the body then returns): the guard stops
 *                it as an escaped fork; the parent fails on its own
 *                unless the child ended with MPF_ESCAPED_EXIT_STATUS.
 */
#ifndef CONTRACT_OFFENCE_H
#define CONTRACT_OFFENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -1 if the deed went otherwise. */
int contract_offence(void);

#ifdef __cplusplus
}
#endif

#endif
