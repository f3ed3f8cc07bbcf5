#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# run_test.sh [--timeout S] NAME -- CMD ARGS...: how ctest runs every lab test (lab.*, fabric.*,
# e2e.*, faults.*; ibat_add_lab_ctest in tests/lab/CMakeLists.txt), so that a test leaves nothing
# running. CMD runs with IBAT_TEST_TAG=NAME-<runner pid> in its environment, which every process
# it starts inherits, also ibsim and OpenSM (ibat-lab starts them in sessions of their own, out of
# the test's process group) and ibatd. Once CMD has exited, a process still carrying the tag
# outlived its test: the runner prints each (pid, parent, command line), kills it (SIGTERM, then
# SIGKILL) and exits 1, even when CMD passed. Otherwise it exits with CMD's code.
# --timeout S: after S seconds CMD's process group gets SIGTERM (a lab test's on_exit cleanups
# run), SIGKILL 20 s later, and the test fails. Set S about 30 s below ctest's TIMEOUT: ctest's
# own timeout SIGKILLs the runner too, and nothing would look for survivors.
set -uo pipefail

timeout_s=0
if [[ ${1:-} == --timeout ]]; then timeout_s=$2; shift 2; fi
(($# >= 3)) && [[ $2 == -- ]] || { echo "usage: run_test.sh [--timeout S] NAME -- CMD ARGS..." >&2; exit 2; }
name=$1; shift 2
tag=$name-$$
start=$SECONDS

# Only CMD's environment carries the tag, not the runner's, nor the greps below.
if ((timeout_s > 0)); then
  IBAT_TEST_TAG=$tag timeout --kill-after=20 "$timeout_s" "$@" &
else
  IBAT_TEST_TAG=$tag "$@" &
fi
child=$!
# ctest stopped or interrupted (SIGTERM, SIGINT): pass it on, then still look for survivors.
trap 'kill -TERM "$child" 2>/dev/null' INT TERM HUP
rc=0
wait "$child" || rc=$?
# a wait cut short by the trap returns > 128 while the child still runs (or is unreaped)
while ((rc > 128)) && kill -0 "$child" 2>/dev/null; do rc=0; wait "$child" || rc=$?; done
trap - INT TERM HUP
if ((timeout_s > 0 && (rc == 124 || rc == 137))); then
  echo "run_test: $name: TIMEOUT, still running after $timeout_s s (SIGTERM sent, exit $rc)" >&2
fi

# tagged: pids of live processes whose environment holds the tag (zombies have none)
tagged() {
  grep -lzxF "IBAT_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}

# A process the test signalled just before it exited may still be on its way out: 3 s of grace.
survivors=()
for _ in $(seq 30); do
  mapfile -t survivors < <(tagged)
  ((${#survivors[@]} == 0)) && break
  sleep 0.1
done

if ((${#survivors[@]})); then
  echo "FAIL: $name left ${#survivors[@]} process(es) running (IBAT_TEST_TAG=$tag):" >&2
  for pid in "${survivors[@]}"; do
    ppid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
    echo "  pid $pid (parent ${ppid:-?}): ${cmd:-?}" >&2
  done
  kill -TERM "${survivors[@]}" 2>/dev/null
  for _ in $(seq 20); do
    mapfile -t survivors < <(tagged)
    ((${#survivors[@]} == 0)) && break
    sleep 0.1
  done
  ((${#survivors[@]} == 0)) || kill -KILL "${survivors[@]}" 2>/dev/null
  echo "run_test: $name: killed them; exit $rc after $((SECONDS - start)) s, failed for what it left" >&2
  exit 1
fi
echo "run_test: $name: exit $rc after $((SECONDS - start)) s, nothing left running"
exit "$rc"
