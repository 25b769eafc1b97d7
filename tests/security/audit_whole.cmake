# SPDX-License-Identifier: MIT
# Audit lines whole or absent (issue 18, item 5). Included from
# tests/security/CMakeLists.txt.

# A kill loop over 8 concurrent writers of audit lines: the fixture's
# writer compiled in (it is internal), judged by mpf-audit.
add_executable(audit_tear audit_tear.c
  ${PROJECT_SOURCE_DIR}/fixture/src/audit_file.c
  ${PROJECT_SOURCE_DIR}/fixture/src/audit_json.c
  ${PROJECT_SOURCE_DIR}/fixture/src/text_escape.c)
target_include_directories(audit_tear PRIVATE ${PROJECT_SOURCE_DIR}/fixture/src
  ${PROJECT_SOURCE_DIR}/fixture/include)
target_link_libraries(audit_tear PRIVATE m)
add_test(NAME audit_lines.kill_loop_of_8_writers_leaves_no_line_glued
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_audit_tear.py
          $<TARGET_FILE:audit_tear> ${PROJECT_SOURCE_DIR}/fixture/tools/mpf_audit.py)
set_tests_properties(audit_lines.kill_loop_of_8_writers_leaves_no_line_glued
  PROPERTIES LABELS "fixture;security" TIMEOUT 600 PASS_REGULAR_EXPRESSION "\nOK\n")
