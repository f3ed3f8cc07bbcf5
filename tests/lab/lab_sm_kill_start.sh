#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.sm_kill_start: SIGKILLed OpenSMs leave stale ibsim client slots (10 per simulator);
# `sm start` frees them, so eleven kill/start rounds on an HCA node all come up.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name smk)
lab_up "$name" --topology "$TOPO/small-2sw4hca.net" --sm-node Hca1 >/dev/null

for round in $(seq 1 11); do
  "$LAB" sm --name "$name" kill >/dev/null
  [[ $("$LAB" status --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["running"]["sm_primary"])') == False ]] ||
    fail "round $round: OpenSM still runs after kill"
  "$LAB" sm --name "$name" start >/dev/null 2>&1 || fail "round $round: sm start after kill failed"
done
pass "11 kill/start rounds"
expect_eq "SM state after the last start" "$(sminfo_state "$name" Hca3)" SMINFO_MASTER
