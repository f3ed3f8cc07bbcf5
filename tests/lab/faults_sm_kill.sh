#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.sm_kill: OpenSM SIGKILL, then a new OpenSM, under load through two ibatd: every request
# answered exactly once, no DLID 0, no failure.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fsmk)
faults_setup "$name"

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 600
sleep 1  # load before the fault
"$LAB" sm --name "$name" kill >/dev/null
sleep 2  # the fabric runs without an SM for 2 s
"$LAB" sm --name "$name" start >/dev/null
pass "OpenSM killed, down 2 s, started again"
sleep 2  # load after the SM is back
kill -INT "$LOAD_PID"
load_wait "$out" "load through SM SIGKILL + restart"
report "OpenSM SIGKILL, 2 s without SM, restart" "$out"
faults_finish
