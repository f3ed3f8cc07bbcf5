#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.loss: 10 % and then 50 % of the MADs through daemon A's port (h0001) are dropped, under
# load through both daemons with a fifth of the requests bypassing the cache. At 10 % nothing
# fails; at 50 % only `timeout` failures are allowed (counted); none has DLID 0; all answered once.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name flos)
faults_setup "$name"
args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 4 --depth 8 --rate 1500
      --uncached-share 0.2 --duration 6)

"$LAB" loss --name "$name" 'h0001[1]' 10 >/dev/null
out10=$FAULTS_DIR/loss10.json
load_run "$out10" "6 s of load at 10 % MAD loss on h0001" "${args[@]}" --timeout-ms 15000 --expect-exists
report "10 % MAD loss on the daemon host's port (6 s)" "$out10"

"$LAB" loss --name "$name" 'h0001[1]' 50 >/dev/null
out50=$FAULTS_DIR/loss50.json
load_run "$out50" "6 s of load at 50 % MAD loss on h0001" "${args[@]}" --timeout-ms 2000 --expect-exists --allow-timeouts
"$LAB" loss --name "$name" 'h0001[1]' 0 >/dev/null
report "50 % MAD loss on the daemon host's port (6 s, 2 s deadline)" "$out50" \
  "$(jq_py "$out50" 's["failures"].get("timeout", 0)') timeouts, counted"
faults_finish
