/* SPDX-License-Identifier: MIT */
/* offence.c — see offence.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

#include "offence.h"

int contract_offence(void)
{
    char name[64];
    snprintf(name, sizeof name, "/mpf-contract-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return -1;
    close(fd);
    if (getenv("CONTRACT_EXPECTED"))
        mpf_expect(MPF_SHM_LEAK, name + 1);
    return 0;
}
