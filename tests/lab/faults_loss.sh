#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.loss: 10 % and then 50 % of the MADs through daemon A's port (h0001) are dropped, under
# load through both daemons with a fifth of the requests bypassing the cache; all of it twice, so
# that a 10 % phase also follows a 50 % one (whose timed-out MADs once pinned the SA's MAD timer at
# 10 s: docs/reliability.md, "10 % loss right after 50 %"). At 10 % nothing fails; at 50 % only
# `timeout` failures are allowed (counted); none has DLID 0; all answered once; the daemons keep
# their RSS from the first round to the second.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name flos)
faults_setup "$name"
args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 4 --depth 8 --rate 1500
      --uncached-share 0.2 --duration 6)

# lossy ROUND: 6 s of load at 10 % MAD loss, then 6 s at 50 %, then no loss again.
lossy() {
  local round=$1
  "$LAB" loss --name "$name" 'h0001[1]' 10 >/dev/null
  load_run "$FAULTS_DIR/loss10-$round.json" "round $round: 6 s of load at 10 % MAD loss on h0001" \
    "${args[@]}" --timeout-ms 15000 --expect-exists
  "$LAB" loss --name "$name" 'h0001[1]' 50 >/dev/null
  load_run "$FAULTS_DIR/loss50-$round.json" "round $round: 6 s of load at 50 % MAD loss on h0001" \
    "${args[@]}" --timeout-ms 2000 --expect-exists --allow-timeouts
  "$LAB" loss --name "$name" 'h0001[1]' 0 >/dev/null
}

# The first round reaches the working set's peak (at 50 % loss, the queries outstanding with their
# resend timers and waiters), which the allocator keeps: the RSS baselines come after it, so that
# the second round's growth is a leak's, growth with the load, not the first peak.
lossy 1
RSS_A=$(rss_kb A)
RSS_B=$(rss_kb B)
lossy 2
report "10 % MAD loss on the daemon host's port (6 s)" "$FAULTS_DIR/loss10-1.json"
report "50 % MAD loss on the daemon host's port (6 s, 2 s deadline)" "$FAULTS_DIR/loss50-1.json" \
  "$(jq_py "$FAULTS_DIR/loss50-1.json" 's["failures"].get("timeout", 0)') timeouts, counted"
faults_finish
