#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Runs ctest tests again and again, in a row, and prints how many runs of each passed before the
# first failure: the check that a lab scenario is not flaky (issue "One way to the SA":
# faults.sm_restart and faults.table 20 runs in a row with the default config).
#   scripts/repeat-test.sh [-n RUNS] [-b BUILD_DIR] TEST...   (default 20 runs, build-test)
#   e.g. scripts/repeat-test.sh -n 20 faults.sm_restart faults.table
# Each test stops at its first failure, whose ctest output is kept in
# /tmp/ibat-repeat-<test>-<run>.log. Prints one line per test ("faults.sm_restart: 20/20 in a
# row") and one JSON line per test ({"test", "runs", "passed_in_a_row"}) on stdout.
# Exit code: 0 if every test passed every run, 1 if one failed, 2 for a usage error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=20
build=$root/build-test
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "n:b:h" opt; do
  case $opt in
    n) [[ $OPTARG =~ ^[1-9][0-9]*$ ]] || { echo "repeat-test: -n wants a positive count, got '$OPTARG'" >&2; exit 2; }
       runs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
(($#)) || usage
[[ -f $build/CTestTestfile.cmake ]] || { echo "repeat-test: no ctest tree in $build (make build-test first)" >&2; exit 2; }
rc=0
for test in "$@"; do
  passed=0
  for run in $(seq 1 "$runs"); do
    log=/tmp/ibat-repeat-$test-$run.log
    start=$SECONDS
    if ctest --test-dir "$build" -R "^${test//./\\.}\$" --output-on-failure >"$log" 2>&1 &&
       grep -q "100% tests passed, 0 tests failed out of 1" "$log"; then
      passed=$((passed + 1))
      echo "$test run $run: passed in $((SECONDS - start)) s" >&2
      rm -f "$log"
    else
      echo "$test run $run: FAILED in $((SECONDS - start)) s (output kept in $log)" >&2
      rc=1
      break
    fi
  done
  echo "$test: $passed/$runs in a row"
  printf '{"test": "%s", "runs": %d, "passed_in_a_row": %d}\n' "$test" "$runs" "$passed"
done
exit $rc
