#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A guarded GoogleTest binary's selections (issue 29, item 9), one row a
ctest test:

    check_gtest_selection.py BINARY ROW

A selection that selects no test of the whole program (gtest's filter from
--gtest_filter, GTEST_FILTER or Bazel's TESTBRIDGE_TEST_ONLY; MPF_CASE)
fails in every shard with one line naming it, no test run, gtest's exit
status 1 and the line in gtest's XML; a shard empty only because of
sharding passes; MPF_CASE narrows gtest's filter. Each shard of a row runs
with the environment gtest and Bazel give it. Prints what it saw, then
"check_gtest_selection: PASS", else a FAIL line each.
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

PROGRAM = "gtest_guarded_suite"

# name: (arguments, environment, shards (None: not sharded), what it says)
# where what it says is ("fails", the line) or ("runs", {shard: tests}).
ROWS = {
    "bazel_filter_of_no_test_fails_every_shard": (
        [], {"TESTBRIDGE_TEST_ONLY": "no_such_test"}, 2,
        ("fails", "mpfixture: TESTBRIDGE_TEST_ONLY='no_such_test' "
         "(--test_filter) matches no case of %s (in any shard)" % PROGRAM)),
    "gtest_filter_variable_of_no_test_fails_every_shard": (
        [], {"GTEST_FILTER": "Leaks.No*"}, 3,
        ("fails", "mpfixture: GTEST_FILTER='Leaks.No*' matches no case of "
         "%s (in any shard)" % PROGRAM)),
    "gtest_filter_flag_of_no_test_fails": (
        ["--gtest_filter=Leaks.*-Leaks.*"], {}, None,
        ("fails", "mpfixture: --gtest_filter='Leaks.*-Leaks.*' matches no "
         "case of %s" % PROGRAM)),
    "mpf_case_of_no_test_fails": (
        [], {"MPF_CASE": "no_such_test"}, None,
        ("fails", "mpfixture: MPF_CASE='no_such_test' matches no case of %s"
         % PROGRAM)),
    "mpf_case_outside_the_filter_fails_every_shard": (
        ["--gtest_filter=Leaks.*"], {"MPF_CASE": "Budget.*"}, 2,
        ("fails", "mpfixture: --gtest_filter='Leaks.*' and MPF_CASE="
         "'Budget.*' match no case of %s (in any shard)" % PROGRAM)),
    "negative_filter_of_every_test_fails": (
        ["--gtest_filter=-*"], {}, None,
        ("fails", "mpfixture: --gtest_filter='-*' matches no case of %s"
         % PROGRAM)),
    # Passing rows: one selected test over 4 shards leaves 3 empty only
    # by sharding; MPF_CASE narrows the filter, alone or with it.
    "shard_empty_only_by_sharding_passes": (
        [], {"TESTBRIDGE_TEST_ONLY": "Leaks.CleanFirst"}, 4,
        ("runs", {0: ["Leaks.CleanFirst"], 1: [], 2: [], 3: []})),
    "mpf_case_selects_alone": (
        [], {"MPF_CASE": "Leaks.Clean*"}, None,
        ("runs", {None: ["Leaks.CleanFirst", "Leaks.CleanAgain"]})),
    "filter_of_several_patterns_less_one_selects_the_rest": (
        ["--gtest_filter=Leaks.CleanFirst:Leaks.CleanAgain:Budgets.Short*"
         "-Budgets.*"], {}, None,
        ("runs", {None: ["Leaks.CleanFirst", "Leaks.CleanAgain"]})),
    "mpf_case_selects_within_the_filter": (
        ["--gtest_filter=Leaks.Clean*:Budgets.*"], {"MPF_CASE": "*First"},
        None, ("runs", {None: ["Leaks.CleanFirst"]})),
}


def run(binary, args, env_add, shards, index, xml_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEST_", "GTEST_", "MPF_CASE", "XML_OUTPUT",
                                "TESTBRIDGE"))}
    env.update(env_add, GTEST_COLOR="no", XML_OUTPUT_FILE=xml_path)
    if shards:
        env.update(TEST_TOTAL_SHARDS=str(shards), TEST_SHARD_INDEX=str(index),
                   GTEST_TOTAL_SHARDS=str(shards),
                   GTEST_SHARD_INDEX=str(index))
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env)
    return p.returncode, p.stdout.decode(errors="replace")


def xml_failures(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return ["(no XML: %s)" % e]
    return [f.get("message", "") for f in root.iter("failure")]


def main():
    binary, row = sys.argv[1], sys.argv[2]
    args, env_add, shards, (kind, want) = ROWS[row]
    adapter_run.become_subreaper("check_gtest_selection")
    problems = []
    for index in range(shards) if shards else [None]:
        where = "shard %s of %s" % (index, shards) if shards else "the run"
        xml_path = tempfile.mktemp(prefix="mpf_gtest_sel_", suffix=".xml")
        status, out = run(binary, args, env_add, shards, index, xml_path)
        print("--- %s: exit status %d\n%s" % (where, status, out))
        said = re.findall(r"^mpfixture: .*$", out, re.M)
        ran = re.findall(r"^\[ RUN      \] (\S+)$", out, re.M)
        if kind == "fails":
            if said != [want]:
                problems.append("%s: said %r, want the one line %r"
                                % (where, said, want))
            if ran:
                problems.append("%s: ran %s, want no test" % (where, ran))
            if status != 1:
                problems.append("%s: exit status %d, want 1" % (where, status))
            if not any(want in f for f in xml_failures(xml_path)):
                problems.append("%s: XML_OUTPUT_FILE holds no failure with "
                                "the line: %s" % (where, xml_failures(xml_path)))
        else:
            if said:
                problems.append("%s: said %r, want nothing" % (where, said))
            if ran != want[index]:
                problems.append("%s: ran %s, want %s" % (where, ran, want[index]))
            if status != 0:
                problems.append("%s: exit status %d, want 0" % (where, status))
        if os.path.exists(xml_path):
            os.unlink(xml_path)
    adapter_run.check_nothing_left(problems)
    return adapter_run.verdict("check_gtest_selection", problems)


if __name__ == "__main__":
    sys.exit(main())
