# SPDX-License-Identifier: MIT
# A run of stages that always runs them all, sourced by ci/test.sh:
#
#   . ci/stages.sh
#   stages_begin LOG_DIR COUNT
#   stage NAME COMMAND [ARG...]     # as many as COUNT
#   stages_end                      # the table; returns 1 if any stage failed
#
# Each stage runs in a subshell with errexit on, its stdout and stderr in
# LOG_DIR/NN-NAME.log, stdin from /dev/null. A failed stage does not stop
# the run: every later stage still runs. Output, for a terminal or a CI
# log alike, is one line a stage as it ends (the last lines of its log
# under it when it failed), then one table of every stage with its
# result and time, and a last line with the count. Nothing else: what a
# stage prints is in its log, whose path the table gives.

stages_begin() {
  stages_logs=$1
  stages_count=$2
  stages_names=()
  stages_results=()
  stages_times=()
  stages_start=$SECONDS
  rm -rf "$stages_logs"
  mkdir -p "$stages_logs"
  printf '%s: %d stages, each one'"'"'s output in %s/\n' "${0##*/}" "$stages_count" "$stages_logs"
}

# stages_duration SECONDS: "4m07s".
stages_duration() {
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# stage NAME COMMAND [ARG...]: run one stage. errexit holds inside the
# subshell because its status is read afterwards, not tested by `||`
# (bash turns errexit off in a command list whose status is tested).
stage() {
  local name=$1 n=$((${#stages_names[@]} + 1)) start=$SECONDS status
  shift
  local log
  log=$stages_logs/$(printf '%02d' "$n")-$name.log
  set +e
  (
    set -e
    "$@"
  ) </dev/null >"$log" 2>&1
  status=$?
  set -e
  local took=$((SECONDS - start)) result=passed
  [ "$status" -eq 0 ] || result="FAILED (exit $status)"
  stages_names+=("$name")
  stages_results+=("$result")
  stages_times+=("$took")
  printf '[%d/%d] %-14s %s, %s\n' "$n" "$stages_count" "$name" "$result" "$(stages_duration "$took")"
  if [ "$status" -ne 0 ]; then
    # The log's last lines: where a script or ctest says what failed (a
    # log the stage removed is said, and stops nothing).
    { tail -n 15 "$log" 2>&1 || true; } | sed 's/^/    | /'
  fi
  return 0
}

# stages_end: the table, the count line; returns 1 if a stage failed or
# fewer stages ran than stages_begin announced.
stages_end() {
  local i failed=0 ran=${#stages_names[@]}
  printf '\n%-3s %-14s %-18s %7s  %s\n' "" stage result time log
  for ((i = 0; i < ran; i++)); do
    [ "${stages_results[$i]}" = passed ] || failed=$((failed + 1))
    printf '%-3s %-14s %-18s %7s  %s\n' "$((i + 1))" "${stages_names[$i]}" "${stages_results[$i]}" \
      "$(stages_duration "${stages_times[$i]}")" \
      "$stages_logs/$(printf '%02d' $((i + 1)))-${stages_names[$i]}.log"
  done
  local total
  total=$(stages_duration $((SECONDS - stages_start)))
  if [ "$failed" -eq 0 ] && [ "$ran" -eq "$stages_count" ]; then
    printf '%s: %d of %d stages passed in %s\n' "${0##*/}" "$ran" "$stages_count" "$total"
    return 0
  fi
  printf '%s: %d of %d stages FAILED (%d ran) in %s\n' "${0##*/}" "$failed" "$stages_count" "$ran" "$total"
  return 1
}
