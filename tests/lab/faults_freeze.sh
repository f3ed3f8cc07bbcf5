#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.freeze: the whole fabric stops for 20 s (ibsim console Wait) under load through two
# ibatd: cached answers keep flowing, uncached ones wait for the fabric and then succeed; no
# failure, no DLID 0, every request answered once.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name ffz)
write_config "$FAULTS_DIR/ibatd.toml" "retry_count = 32" "request_timeout_ms = 60000"
LOAD_TIMEOUT_MS=40000
faults_setup "$name"

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 26
sleep 1  # load before the fault
"$LAB" freeze --name "$name" 20 >/dev/null
pass "fabric frozen for 20 s"
load_wait "$out" "load through a 20 s fabric freeze"
report "20 s fabric freeze (uncached requests wait it out)" "$out"
faults_finish
