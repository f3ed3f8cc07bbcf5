#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.sm_restart: PortMonitor (ibat-probe --monitor, 1 s polls) reports a restart with new LIDs
# (local LID change + SM change) within two polls, and an OpenSM restart on the same node, which
# nothing local shows in ibsim, by its routine SM/SA check (here every 1-1.5 s: --sm-check-s 1)
# within that interval plus two polls.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name fsmr)
poll_ms=1000
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
events=$FABRIC_ENV_CACHE/events
start_monitor "$name" h0003 "$events" $poll_ms --sm-check-s 1

# expect_sm_change WHAT STARTED_MS DONE_MS ALLOWED_MS: an sm_changed after STARTED, within ALLOWED of DONE
expect_sm_change() {
  local e
  e=$(wait_event "$events" 'e["event"] == "sm_changed"' 10 "$2")
  local late=$(( $(json_field "$e" wall_ms) - $3 ))
  ((late <= $4)) || fail "$1 detected ${late} ms after the SM came back (> $4 ms)"
  pass "$1 detected ${late} ms after the SM came back"
}

started=$(now_ms)
"$LAB" sm --name "$name" restart >/dev/null
expect_sm_change "sm restart" "$started" "$(now_ms)" $((1500 + 2 * poll_ms))

old_lid=$(host_field "$name" h0003 lid)
started=$(now_ms)
"$LAB" sm --name "$name" restart --new-lids >/dev/null 2>&1
done_ms=$(now_ms)
new_lid=$(host_field "$name" h0003 lid)
[[ $new_lid != "$old_lid" ]] || fail "restart --new-lids kept h0003's LID $old_lid"
expect_sm_change "sm restart --new-lids" "$started" "$done_ms" $((2 * poll_ms))
e=$(wait_event "$events" "e['event'] == 'local_port' and e['lid'] == $new_lid" 10 "$started")
late=$(( $(json_field "$e" wall_ms) - done_ms ))
((late <= 2 * poll_ms)) || fail "new local LID $new_lid reported ${late} ms late"
pass "local LID $old_lid -> $new_lid reported ${late} ms after the SM came back"

stop_monitor
stats=$(tail -1 "$events")
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["event"]=="stats" and s["stats"]["sm_changes"]==2, s' "$stats" ||
  fail "expected exactly 2 SM changes, got: $stats"
pass "exactly 2 SM changes counted"
