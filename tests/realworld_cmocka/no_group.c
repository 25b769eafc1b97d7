/* SPDX-License-Identifier: MIT */
/*
 * no_group.c — a program linked with the cmocka drop-in that never runs a
 * cmocka group (a helper built with the tests' link line): the drop-in
 * says, on stderr, that it guarded nothing, once (not again in the child
 * the program forks); the exit status is the program's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    puts("no tests here");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        exit(0); /* the child's exit: the drop-in says nothing there */
    int status = -1;
    return pid > 0 && waitpid(pid, &status, 0) == pid && status == 0 ? 0 : 1;
}
