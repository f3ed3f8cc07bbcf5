#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.clients: clients that hang up with requests in flight (a client closing its connections
# every 40 requests with a third of them waiting on the SA, and a client SIGKILLed mid-run), then
# 500 concurrent client connections. Meanwhile a steady load sees no failure; the daemons keep
# their RSS, drop every closed connection, and answer each request exactly once.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fcl)
faults_setup "$name"
many_args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 500 --depth 4 --count 20000
           --uncached-share 0.05 --timeout-ms 15000 --expect-exists)
# 500 connections need per-connection buffers: take the RSS baselines once that peak has been
# reached, so that what is compared at the end is growth from a leak, not the first peak.
load_run "$FAULTS_DIR/many-warm.json" "500 concurrent connections (first round, before the RSS baselines)" "${many_args[@]}"
RSS_A=$(rss_kb A)
RSS_B=$(rss_kb B)

steady=$FAULTS_DIR/steady.json
load_start "$steady" "${LOAD_ARGS[@]}" --duration 600
steady_pid=$LOAD_PID

hangups=$FAULTS_DIR/hangups.json
load_start "$hangups" --socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 8 --depth 32 \
  --uncached-share 0.3 --disconnect-every 40 --timeout-ms 15000 --duration 5 --expect-exists
hangups_pid=$LOAD_PID
load_start "$FAULTS_DIR/killed.json" --socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" \
  --connections 16 --depth 64 --uncached-share 0.3 --timeout-ms 15000 --duration 600
killed_pid=$LOAD_PID
sleep 2  # let the doomed client get requests in flight
kill -KILL "$killed_pid"
wait "$killed_pid" 2>/dev/null || true
pass "a client with 16 connections SIGKILLed mid-run"
LOAD_PID=$hangups_pid
load_wait "$hangups" "client closing its connections with requests in flight"
closes=$(jq_py "$hangups" 's["client_closes"]')
abandoned=$(jq_py "$hangups" 's["abandoned"]')
((closes > 0 && abandoned > 0)) || fail "the hang-up client closed $closes connections abandoning $abandoned requests"
pass "$closes connections closed with $abandoned requests in flight"

many=$FAULTS_DIR/many.json
load_run "$many" "500 concurrent connections (second round)" "${many_args[@]}"

LOAD_PID=$steady_pid
kill -INT "$LOAD_PID"
load_wait "$steady" "steady load beside the misbehaving clients"
for tag in A B; do
  conns=$("$LOAD" --json --socket "$(sock $tag)" --dgid "$(awk 'NR == 1 {print $1}' "$DGIDS")" --count 1 |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["daemons"][0]["before"]["connections"])')
  expect_eq "connections open on ibatd $tag once all clients left (only the stats reader)" "$conns" 1
done
report "clients hang up with requests in flight (+1 client SIGKILLed); steady load beside" "$steady"
report "… the hanging-up client (abandoned requests are its own)" "$hangups" "$closes hang-ups, $abandoned requests abandoned in flight"
report "500 concurrent client connections" "$many"
faults_finish
