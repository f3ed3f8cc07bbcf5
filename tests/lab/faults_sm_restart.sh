#!/usr/bin/env bash
# faults.sm_restart: OpenSM SIGTERM + restart with the same LIDs, 10 times in a row, under load
# through two ibatd: every request answered exactly once, no DLID 0, no failure.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fsmr)
faults_setup "$name"

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 600
for round in $(seq 1 10); do
  "$LAB" sm --name "$name" restart >/dev/null
done
pass "OpenSM restarted 10 times"
sleep 1  # one more daemon poll period of load after the last restart
kill -INT "$LOAD_PID"
load_wait "$out" "load through 10 SM restarts"
for tag in A B; do
  changes=$(grep -c 'SM changed' "$FAULTS_DIR/$tag.err" || true)
  ((changes >= 10)) || fail "ibatd $tag noticed $changes SM changes for 10 restarts"
  pass "ibatd $tag noticed $changes SM changes"
done
report "OpenSM SIGTERM + restart ×10" "$out"
faults_finish
