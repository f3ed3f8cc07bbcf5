#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.daemon_kill: ibatd A is SIGKILLed under load and restarted with its warm snapshot
# (--cache-file, written every second). The load reconnects; only the requests in flight on A's
# connections at the kill fail (`disconnected`, counted); after the restart A serves every
# destination from the snapshot at once, with no failure and no DLID 0.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fdk)
faults_setup "$name"
snapshot=$FAULTS_DIR/A.cache
deadline=$((SECONDS + 10))
until [[ -s $snapshot ]]; do
  ((SECONDS < deadline)) || fail "ibatd A wrote no snapshot to $snapshot within 10 s"
  sleep 0.1
done
pass "ibatd A wrote its snapshot ($(stat -c %s "$snapshot") bytes)"

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --reconnect --allow-failure disconnected --duration 600
sleep 1  # load before the fault
kill_ibatd A
pass "ibatd A SIGKILLed"
start_ibatd "$name" h0001 A --config "$CONFIG"
first=$FAULTS_DIR/first.json
load_run "$first" "first requests after the restart: every destination once" \
  --socket "$(sock A)" --dgids "$DGIDS" --count "$(wc -l <"$DGIDS")" --depth 64 --timeout-ms 15000 --expect-exists
entries=$(jq_py "$first" 's["daemons"][0]["before"]["entries"]')
((entries >= $(wc -l <"$DGIDS"))) || fail "restarted ibatd A had $entries entries before any request (snapshot not loaded?)"
pass "restarted ibatd A started with $entries entries from its snapshot"
RSS_A=$(rss_kb A)  # a new process: its baseline is taken once it served every destination
sleep 2  # load after the restart
kill -INT "$LOAD_PID"
load_wait "$out" "load through ibatd SIGKILL + warm restart"
jq_py "$out" 's["reconnects"] >= 1' | grep -qx True || fail "the load never reconnected to the restarted ibatd"
report "ibatd SIGKILL + restart with warm snapshot" "$out" \
  "$entries entries loaded from the snapshot; failures are the requests in flight at the kill"
faults_finish
