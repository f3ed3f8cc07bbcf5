#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# One resolve at a time (ibat-bench p50_us/p99_us) with ibatd's busy_poll_us at 0 and at its
# default 50, on an idle host and under CPU hogs (docs/performance.md, "One resolve at a time").
# Starts a fattree-32 lab fabric and ibatd on h0001 (as scripts/bench.sh does), always tears down.
# Prints one line per run; LOADS, SAMPLES and REPS (runs per case) may be set. Needs the release
# build (BIN_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-build/bin}
LOADS=${LOADS:-"idle hog hog2 nice19x2"}
SAMPLES=${SAMPLES:-20000}
REPS=${REPS:-3}
name=latency-$$ work="" daemon="" hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; hogs=(); }
stop_daemon() {
  if [[ -n $daemon ]]; then kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; daemon=""; fi
}
cleanup() {
  stop_hogs
  stop_daemon
  if [[ -n $work ]]; then lab/ibat-lab down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"; fi
}
trap cleanup EXIT

# start_hogs LOAD: idle; hog (one busy loop); hog2 (two); nice19x2 (two at nice 19).
start_hogs() {
  local n=0 nice=0
  case $1 in idle) ;; hog) n=1 ;; hog2) n=2 ;; nice19x2) n=2 nice=19 ;; *) echo "unknown load $1" >&2; exit 2 ;; esac
  for ((i = 0; i < n; i++)); do nice -n "$nice" sh -c 'while :; do :; done' & hogs+=($!); done
}

start_daemon() {  # start_daemon BUSY_POLL_US
  cat >"$work/ibatd.toml" <<TOML
log_level = "warn"
[server]
busy_poll_us = $1
[snapshot]
cache_file = ""
TOML
  (cd "$work" && exec "$lab" run --name "$name" --node h0001 -- "$ibatd" \
     --config "$work/ibatd.toml" --socket "$work/ibatd.sock" --acm-socket "" 2>"$work/ibatd.log" >/dev/null) &
  daemon=$!
  local deadline=$((SECONDS + 30))
  until "$BIN_DIR/ibat" --socket "$work/ibatd.sock" resolve --dgid "${dgids%%,*}" --timeout 2000 >/dev/null 2>&1; do
    kill -0 "$daemon" 2>/dev/null || { echo "ibatd exited: $(tail -5 "$work/ibatd.log")" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "ibatd does not resolve after 30 s" >&2; exit 1; }
    sleep 0.2
  done
}

work=$(mktemp -d /tmp/ibat-latency.XXXXXX)
lab/ibat-lab up --name "$name" --topology lab/topologies/fattree-32.net >/dev/null
ibatd=$(cd "$BIN_DIR" && pwd)/ibatd lab=$PWD/lab/ibat-lab
dgids=$(lab/ibat-lab hosts --name "$name" --json |
  python3 -c 'import json,sys; print(",".join(h["gid"] for h in json.load(sys.stdin) if h["node"] != "h0001"))')
echo "busy_poll_us load p50_us p99_us p999_us daemon_polled_us_per_resolve"
for busy in 0 50; do
  start_daemon "$busy"
  for load in $LOADS; do
    start_hogs "$load"
    for ((rep = 0; rep < REPS; rep++)); do
      "$BIN_DIR/ibat-bench" --json --socket "$work/ibatd.sock" --dgids "$dgids" --cached-seconds 0.3 \
          --uncached-seconds 0.2 --latency-samples "$SAMPLES" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); s=r["single"]
print(sys.argv[1], sys.argv[2], r["p50_us"], r["p99_us"], s["p999_us"], s["daemon_polled_us_per_resolve"])' "$busy" "$load"
    done
    stop_hogs
  done
  stop_daemon
done
