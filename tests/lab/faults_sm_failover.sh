#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.sm_failover: the master OpenSM (h0000) stops and the standby on h0031 takes over, so the
# SM LID changes; load through two ibatd sees no failure, no DLID 0, every request answered once.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name ffo)
faults_setup "$name" --sm-node h0000 --standby-sm h0031
old_sm_lid=$(sm_lid "$name" h0001)

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 600
sleep 1  # load before the fault
"$LAB" sm --name "$name" failover >/dev/null
new_sm_lid=$(sm_lid "$name" h0001)
[[ $new_sm_lid != "$old_sm_lid" ]] || fail "SM LID still $old_sm_lid after fail-over"
pass "fail-over: SM LID $old_sm_lid -> $new_sm_lid"
sleep 2  # load after the standby is master
kill -INT "$LOAD_PID"
load_wait "$out" "load through SM fail-over"
report "fail-over to the standby SM (SM LID $old_sm_lid → $new_sm_lid)" "$out"
faults_finish
