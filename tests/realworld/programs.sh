#!/bin/sh
# SPDX-License-Identifier: MIT
# programs.sh NAME — the shell-driven programs of the realworld corpus, one
# per case below, each an everyday use of Debian's tools. Exit 0 when the
# program did its job. MPF_RW_TMP is a scratch directory (run_case.sh).
set -eu
case $1 in
make_j4)
    # make -j4 on a generated Makefile: 8 recipes in parallel, then one
    # that needs them all.
    cd "$MPF_RW_TMP"
    for i in 1 2 3 4 5 6 7 8; do
        printf 't%s:\n\t@sh -c "echo %s > t%s"\n' "$i" "$i" "$i"
    done > Makefile
    printf 'all: t1 t2 t3 t4 t5 t6 t7 t8\n\t@cat t* | sort -n | tail -1\n' >> Makefile
    test "$(make -s -j4 all)" = 8
    ;;
xargs_parallel)
    test "$(seq 1 64 | xargs -P 4 -n 4 sh -c 'echo $(($1 + $2 + $3 + $4))' sh |
            awk '{ s += $1 } END { print s }')" = 2080
    ;;
sort_parallel)
    # Two sorts with two threads each, spilling through gzip helpers.
    test "$(seq 20000 | sort -R --parallel=2 -S 64K -T "$MPF_RW_TMP" \
                            --compress-program=gzip |
            sort -n --parallel=2 | tail -1)" = 20000
    ;;
job_control)
    # Background jobs, wait for each by pid with its status, then all.
    sleep 0.05 & a=$!
    (exit 3) & b=$!
    sleep 0.02 &
    wait "$a"
    rc=0; wait "$b" || rc=$?
    test "$rc" -eq 3
    wait
    ;;
orphan_ends_during)
    # The subshell exits at once; its sleep is an orphan that ends while
    # the program still runs.
    (sleep 0.1 &)
    sleep 0.3
    ;;
orphan_ends_after)
    # The orphan outlives the program by 0.3 s: within mpf-run's grace.
    (sleep 0.3 &)
    ;;
gzip_roundtrip)
    test "$(seq 1 50000 | gzip -c | gzip -dc | wc -l)" = 50000
    ;;
tar_gzip)
    tar -C /usr/share/doc -czf - coreutils | tar -tzf - | grep -q coreutils/copyright
    ;;
process_substitution)
    exec bash -c 'diff <(seq 100) <(seq 100 | sort -n)'
    ;;
gpg_agent_daemon)
    # A daemon left running: gpg-agent forks, the child leaves the session.
    GNUPGHOME=$MPF_RW_TMP gpg-agent --daemon >/dev/null 2>&1
    ;;
dbus_daemon_fork)
    # A daemon that forks and leaves the session. Its socket file goes in
    # the run's own directory: SIGKILLed, the daemon cannot remove it, and
    # under /tmp every run left one behind.
    exec /usr/bin/dbus-daemon --session --fork --nopidfile --print-address=1 \
        --address="unix:tmpdir=$MPF_RW_TMP"
    ;;
nohup_background)
    nohup sleep 1000 >/dev/null 2>&1 &
    ;;
*)
    echo "programs.sh: unknown program '$1'" >&2
    exit 2
    ;;
esac
