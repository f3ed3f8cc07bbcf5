#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
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
# Restarts closer together than one port poll can merge into one SM change; what matters is
# that each daemon notices a change after the last restart began (and so revalidates), under load.
# last_change_after_last_restart TAG: prints the seconds from the last restart to the daemon's last
# SM change if that change came after it
last_change_after_last_restart() {
  local last_change
  last_change=$(grep 'SM changed' "$FAULTS_DIR/$1.err" | tail -1 | cut -c1-23)
  [[ -n $last_change ]] || return 1
  python3 -c 'import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%d %H:%M:%S.%f").timestamp()
d = t - float(sys.argv[2])
print(f"{d:.1f}") if d >= 0 else sys.exit(1)' "$last_change" "$last_restart"
}
noticed=()
for tag in A B; do
  deadline=$((SECONDS + 30))
  until delay=$(last_change_after_last_restart $tag); do
    ((SECONDS < deadline)) || fail "ibatd $tag noticed no SM change within 30 s of the last restart"
    sleep 0.2
  done
  changes=$(grep -c 'SM changed' "$FAULTS_DIR/$tag.err" || true)
  since_up=$(ms_from_subnet_up "$(opensm_log "$name")" "$FAULTS_DIR/$tag.err")
  pass "ibatd $tag noticed $changes SM changes, the last one $delay s after the last restart began, $since_up ms from OpenSM's last SUBNET UP"
  noticed+=("$tag $changes (last after ${delay} s, ${since_up} ms from SUBNET UP)")
done
kill -INT "$LOAD_PID"
load_wait "$out" "load through 10 SM restarts"
report "OpenSM SIGTERM + restart ×10" "$out" "SM changes noticed: ${noticed[*]}"
faults_finish
