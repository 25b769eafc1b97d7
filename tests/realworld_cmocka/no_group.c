/* SPDX-License-Identifier: MIT */
/*
 * no_group.c — a program linked with the cmocka drop-in that never runs a
 * cmocka group (a helper built with the tests' link line): the drop-in
 * says, on stderr, that it guarded nothing; the exit status is the
 * program's own.
 */
#include <stdio.h>

int main(void)
{
    puts("no tests here");
    return 0;
}
