#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.clients: clients that hang up with requests in flight (a client closing its connections
# every 40 requests with a third of them waiting on the SA, and a client SIGKILLed mid-run), then
# 500 concurrent client connections; all of it twice. Meanwhile a steady load sees no failure; the
# daemons keep their RSS from the first round to the second, drop every closed connection, and
# answer each request exactly once.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fcl)
faults_setup "$name"
many_args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 500 --depth 4 --count 20000
           --uncached-share 0.05 --timeout-ms 15000 --expect-exists)

# misbehave ROUND: a client hanging up with requests in flight and a client SIGKILLed mid-run, at
# once, then 500 concurrent connections. Sets CLOSES and ABANDONED (the hang-up client's).
misbehave() {
  local round=$1 hangups=$FAULTS_DIR/hangups-$1.json
  load_start "$hangups" --socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 8 --depth 32 \
    --uncached-share 0.3 --disconnect-every 40 --timeout-ms 15000 --duration 5 --expect-exists
  local hangups_pid=$LOAD_PID
  load_start "$FAULTS_DIR/killed-$round.json" --socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" \
    --connections 16 --depth 64 --uncached-share 0.3 --timeout-ms 15000 --duration 600
  local killed_pid=$LOAD_PID
  sleep 2  # let the doomed client get requests in flight
  kill -KILL "$killed_pid"
  wait "$killed_pid" 2>/dev/null || true
  pass "round $round: a client with 16 connections SIGKILLed mid-run"
  LOAD_PID=$hangups_pid
  load_wait "$hangups" "round $round: client closing its connections with requests in flight"
  CLOSES=$(jq_py "$hangups" 's["client_closes"]')
  ABANDONED=$(jq_py "$hangups" 's["abandoned"]')
  ((CLOSES > 0 && ABANDONED > 0)) || fail "the hang-up client closed $CLOSES connections abandoning $ABANDONED requests"
  pass "round $round: $CLOSES connections closed with $ABANDONED requests in flight"
  load_run "$FAULTS_DIR/many-$round.json" "round $round: 500 concurrent connections" "${many_args[@]}"
}

steady=$FAULTS_DIR/steady.json
load_start "$steady" "${LOAD_ARGS[@]}" --duration 600
steady_pid=$LOAD_PID
# The first round reaches the working set's peak (per-connection buffers, the abandoned requests'
# queries), which the allocator keeps: the RSS baselines come after it, so that the second round's
# growth is a leak's, growth with the load, not the first peak.
misbehave 1
RSS_A=$(rss_kb A)
RSS_B=$(rss_kb B)
misbehave 2

LOAD_PID=$steady_pid
kill -INT "$LOAD_PID"
load_wait "$steady" "steady load beside the misbehaving clients"
for tag in A B; do
  conns=$("$LOAD" --json --socket "$(sock $tag)" --dgid "$(awk 'NR == 1 {print $1}' "$DGIDS")" --count 1 |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["daemons"][0]["before"]["connections"])')
  expect_eq "connections open on ibatd $tag once all clients left (only the stats reader)" "$conns" 1
done
report "clients hang up with requests in flight (+1 client SIGKILLed), twice; steady load beside" "$steady"
report "… the hanging-up client, second round (abandoned requests are its own)" "$FAULTS_DIR/hangups-2.json" "$CLOSES hang-ups, $ABANDONED requests abandoned in flight"
report "500 concurrent client connections, second round" "$FAULTS_DIR/many-2.json"
faults_finish
