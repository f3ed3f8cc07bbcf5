#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.hca_events: ibatd on a lab host reads its HCA's async events as on a real host (the umad
# twin's verbs device, docs/fabric.md "The lab's HCA events"): port events are live, an idle
# daemon runs no routine SM check, a same-LID OpenSM restart is noticed through
# IBV_EVENT_CLIENT_REREGISTER (OpenSM's first master sweep sets ClientReregister on every port),
# and a restart with new LIDs through LID_CHANGE and CLIENT_REREGISTER, the daemon's port then
# on its new LID. Each SM change's delay from OpenSM's SUBNET UP is printed (the figure in
# docs/fabric.md; ms_from_subnet_up in lab_lib.sh). Hosts without events (IBAT_TWIN_VERBS=0): e2e.quiet.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2ehca)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
node=h0005
start_ibatd "$name" $node v
wait_resolving v "$(host "$name" h0020 gid)"
expect_eq "port events" "$(jq_py "$(cli v stats --json)" 'j["fabric"]["port_events"]')" "True"
expect_contains "ibatd's port line" "$(grep 'port events:' "$DAEMON_DIR/v.err")" "verbs async events of"
opensm_log=$(opensm_log "$name")

# sm_changes: the daemon's count of SM changes
sm_changes() { jq_py "$(cli v stats --json)" 'j["fabric"]["sm_changes"]'; }
# wait_sm_change BEFORE WHAT: until the count passes BEFORE (30 s at most)
wait_sm_change() {
  local deadline=$((SECONDS + 30))
  until (( $(sm_changes) > $1 )); do
    ((SECONDS < deadline)) || fail "$2 not noticed within 30 s"
    sleep 0.1
  done
}
events_before=$(grep -c 'HCA event client_reregister' "$DAEMON_DIR/v.err" || true)
before=$(sm_changes)
"$LAB" sm --name "$name" restart >/dev/null
wait_sm_change "$before" "same-LID OpenSM restart"
events_after=$(grep -c 'HCA event client_reregister' "$DAEMON_DIR/v.err" || true)
((events_after > events_before)) || fail "the SM change came without a CLIENT_REREGISTER event"
pass "same-LID restart: CLIENT_REREGISTER, SM change $(ms_from_subnet_up "$opensm_log" "$DAEMON_DIR/v.err") ms after OpenSM's SUBNET UP"

old_lid=$(host_field "$name" $node lid)
before=$(sm_changes)
"$LAB" sm --name "$name" restart --new-lids >/dev/null
wait_sm_change "$before" "OpenSM restart with new LIDs"
pass "new LIDs: SM change $(ms_from_subnet_up "$opensm_log" "$DAEMON_DIR/v.err") ms after OpenSM's SUBNET UP"
grep -q 'HCA event lid_change' "$DAEMON_DIR/v.err" || fail "no LID_CHANGE event for the new LID"
pass "LID_CHANGE raised"
new_lid=$(host_field "$name" $node lid)
[[ $new_lid != "$old_lid" ]] || fail "the lab gave $node no new LID ($old_lid)"
deadline=$((SECONDS + 10))
until [[ $(jq_py "$(cli v ports --json)" 'j[0]["lid"]') == "$new_lid" ]]; do
  ((SECONDS < deadline)) || fail "ibatd's port still on LID $(jq_py "$(cli v ports --json)" 'j[0]["lid"]'), not $new_lid"
  sleep 0.1
done
pass "ibatd's port on its new LID $new_lid (was $old_lid)"
wait_resolving v "$(host "$name" h0021 gid)"
pass "resolving after both restarts"
