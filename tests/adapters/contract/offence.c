/* SPDX-License-Identifier: MIT */
/* offence.c — see offence.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpfixture/mpfixture.h>

#include "offence.h"

static int leave_an_object(void)
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

/* A server child's last act, below the test body: its own exit(). */
static void serve_then_exit(void)
{
    exit(0);
}

/* The child's wait status as its parent sees it: `want` as an exit
   status, or -1. */
static int child_ends_with(pid_t pid, int want)
{
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status) == want ? 0 : -1;
}

int contract_offence(void)
{
    const char *deed = getenv("CONTRACT_DEED");
    if (!deed)
        return leave_an_object();
    fflush(NULL); /* the child's exit() flushes what it inherited */
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (strcmp(deed, "server_exit") == 0) {
        if (pid == 0)
            serve_then_exit();
        return child_ends_with(pid, 0);
    }
    if (pid == 0)
        return 0; /* the escape: back into the body, which returns */
    return child_ends_with(pid, MPF_ESCAPED_EXIT_STATUS);
}
