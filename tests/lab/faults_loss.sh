#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.loss: 10 % and then 50 % of the MADs through daemon A's port (h0001) are dropped, under
# load through both daemons with a fifth of the requests bypassing the cache, and the 50 % again. At
# 10 % nothing fails; at 50 % only `timeout` failures are allowed (counted); none has DLID 0; all
# answered once; the daemons keep their RSS from the first 50 % to the second.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name flos)
faults_setup "$name"
args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 4 --depth 8 --rate 1500
      --uncached-share 0.2 --duration 6)

# loss_load PERCENT ROUND WHAT ARGS...: 6 s of load at PERCENT % MAD loss on h0001, then no loss.
loss_load() {
  local percent=$1 round=$2 what=$3; shift 3
  "$LAB" loss --name "$name" 'h0001[1]' "$percent" >/dev/null
  load_run "$FAULTS_DIR/loss$percent-$round.json" "$what" "${args[@]}" "$@"
  "$LAB" loss --name "$name" 'h0001[1]' 0 >/dev/null
}

loss_load 10 1 "6 s of load at 10 % MAD loss on h0001" --timeout-ms 15000 --expect-exists
loss_load 50 1 "6 s of load at 50 % MAD loss on h0001" --timeout-ms 2000 --expect-exists --allow-timeouts
# The 50 % loss reaches the working set's peak (the queries outstanding with their resend timers
# and waiters), which the allocator keeps: the RSS baselines come after it and the 50 % loss runs
# again, so that the growth compared is a leak's, growth with the load, not the first peak.
RSS_A=$(rss_kb A)
RSS_B=$(rss_kb B)
loss_load 50 2 "6 s of load at 50 % MAD loss on h0001 again (the RSS round)" --timeout-ms 2000 --expect-exists --allow-timeouts
report "10 % MAD loss on the daemon host's port (6 s)" "$FAULTS_DIR/loss10-1.json"
report "50 % MAD loss on the daemon host's port (6 s, 2 s deadline)" "$FAULTS_DIR/loss50-1.json" \
  "$(jq_py "$FAULTS_DIR/loss50-1.json" 's["failures"].get("timeout", 0)') timeouts, counted"
faults_finish
