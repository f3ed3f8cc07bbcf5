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
  last_restart=$(date +%s.%3N)
  "$LAB" sm --name "$name" restart >/dev/null
done
pass "OpenSM restarted 10 times"
sleep 1  # one more daemon poll period of load after the last restart
kill -INT "$LOAD_PID"
load_wait "$out" "load through 10 SM restarts"
# Restarts closer together than one port poll can merge into one SM change; what matters is
# that each daemon noticed a change after the last restart began (and so revalidated).
noticed=()
for tag in A B; do
  changes=$(grep -c 'SM changed' "$FAULTS_DIR/$tag.err" || true)
  last_change=$(grep 'SM changed' "$FAULTS_DIR/$tag.err" | tail -1 | cut -c1-23)
  [[ -n $last_change ]] || fail "ibatd $tag noticed no SM change"
  after=$(python3 -c 'import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%d %H:%M:%S.%f").timestamp()
print(t >= float(sys.argv[2]))' "$last_change" "$last_restart")
  [[ $after == True ]] || fail "ibatd $tag's last SM change ($last_change) is before the last restart"
  pass "ibatd $tag noticed $changes SM changes, the last one after the last restart"
  noticed+=("$tag $changes")
done
report "OpenSM SIGTERM + restart ×10" "$out" "SM changes noticed: ${noticed[*]}"
faults_finish
