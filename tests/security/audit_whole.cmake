# SPDX-License-Identifier: MIT
# Audit lines whole or absent (issue 18, item 5). Included from
# tests/security/CMakeLists.txt.

# A kill loop over 8 concurrent writers of audit lines: the fixture's
# writer compiled in (it is internal), judged by mpf-audit.
add_executable(audit_tear audit_tear.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/audit_file.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/audit_json.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/text_escape.c)
target_include_directories(audit_tear PRIVATE ${PROJECT_SOURCE_DIR}/fixture/src
  ${PROJECT_SOURCE_DIR}/fixture/include)
target_link_libraries(audit_tear PRIVATE m)
add_test(NAME audit_lines.kill_loop_of_8_writers_leaves_no_line_glued
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_audit_tear.py
          $<TARGET_FILE:audit_tear> ${PROJECT_SOURCE_DIR}/fixture/tools/mpf_audit.py)
set_tests_properties(audit_lines.kill_loop_of_8_writers_leaves_no_line_glued
  PROPERTIES LABELS "fixture;security" TIMEOUT 600 PASS_REGULAR_EXPRESSION "\nOK\n")

# Issue 30, item 5: 8 writers x 400 lines at once, none killed: no line
# empty, every line JSON (a writer that saw another's write half done
# took its line for torn and began its own with a newline).
add_executable(audit_concurrent audit_concurrent.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/audit_file.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/audit_json.c
  ${PROJECT_SOURCE_DIR}/fixture/src/report/text_escape.c)
target_include_directories(audit_concurrent PRIVATE ${PROJECT_SOURCE_DIR}/fixture/src
  ${PROJECT_SOURCE_DIR}/fixture/include)
target_link_libraries(audit_concurrent PRIVATE m)
add_test(NAME audit_lines.concurrent_writers_leave_no_empty_line
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_audit_concurrent.py
          $<TARGET_FILE:audit_concurrent>)
set_tests_properties(audit_lines.concurrent_writers_leave_no_empty_line
  PROPERTIES LABELS "fixture;security" TIMEOUT 300 PASS_REGULAR_EXPRESSION "\nOK\n")

# A full file system: the case whose line does not fit fails with "no
# space left on device"; after space is freed the later lines are whole,
# and mpf-audit names the torn one and renders the rest. Root only (a
# small tmpfs in a mount namespace of its own); skipped otherwise.
add_test(NAME audit_lines.full_file_system_fails_the_case_and_keeps_later_lines
  COMMAND /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/audit_full_fs.sh
          $<TARGET_FILE:test_audit_file> ${PROJECT_SOURCE_DIR}/fixture/tools/mpf_audit.py)
set_tests_properties(audit_lines.full_file_system_fails_the_case_and_keeps_later_lines
  PROPERTIES LABELS "fixture;security;must_fail" TIMEOUT 120 SKIP_RETURN_CODE 77
  PASS_REGULAR_EXPRESSION "test_audit_file.full_fs_2_fills_the_file_system FAILED [^\n]*\n(  [^\n]*\n)*  note: MPF_AUDIT: the case's line was not recorded: no space left on device\n.*exit status 1\nmpf_audit: audit.jsonl:2: torn line: a writer stopped after [0-9]+ bytes of it\nmpf_audit: 1 line torn or unreadable[;] 3 whole lines rendered\npass test_audit_file.full_fs_1_first_line [^\n]*\npass test_audit_file.full_fs_3_frees_space [^\n]*\npass test_audit_file.full_fs_4_later_line [^\n]*\nnote: 1 line torn or unreadable, not rendered as cases: audit.jsonl:2 [^\n]*\nmpf-audit exit status 2\n$")
