/* SPDX-License-Identifier: MIT */
/*
 * offence.h — the one offence every adapter's contract program commits
 * (tests/fixture/verdict_tables/adapter_contract.py): the test leaves
 * /dev/shm/mpf-contract-<pid> and, when CONTRACT_EXPECTED is set,
 * declares it with mpf_expect(); it passes either way on its own.
 */
#ifndef CONTRACT_OFFENCE_H
#define CONTRACT_OFFENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -1 if the object could not be made. */
int contract_offence(void);

#ifdef __cplusplus
}
#endif

#endif
