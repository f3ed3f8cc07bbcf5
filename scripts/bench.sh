#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Runs the benchmark binaries of the release build (`make bench`). Extra arguments are passed to
# each Google Benchmark binary (e.g. --benchmark_filter=CacheHit). To add a suite, append its
# binary to BENCHES (the environment's BENCHES picks some). ibat-bench (end to end through ibatd) gets a lab fabric with ibatd on one host,
# started here and always torn down; its JSON is also kept in $BIN_DIR/../ibat-bench.json. ibat-memory: ibatd's
# memory against ports and paths (scripts/bench-memory.sh), kept in $BIN_DIR/../ibat-bench-memory.json.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-build/bin}
read -r -a BENCHES <<<"${BENCHES:-ibat-bench-core ibat-bench ibat-memory}"  # BENCHES="ibat-bench": that one only

# What run_ibat_bench started; stopped on exit whatever happens.
name=bench-$$ work="" daemon=""
cleanup() {
  if [[ -n $daemon ]]; then kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
  if [[ -n $work ]]; then lab/ibat-lab down --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"; fi
}
trap cleanup EXIT

# run_ibat_bench: fattree-32 fabric, ibatd on h0001, ibat-bench against it with the 31 other hosts.
run_ibat_bench() {
  local topology=lab/topologies/fattree-32.net node=h0001
  work=$(mktemp -d /tmp/ibat-bench.XXXXXX)
  # One retry: OpenSM rarely exits at once on a busy machine ("exited before it was up", no log).
  lab/ibat-lab up --name "$name" --topology "$topology" ||
    { echo "bench: ibat-lab up failed, retrying once" >&2; lab/ibat-lab up --name "$name" --topology "$topology"; }
  # The token bucket is opened up so that the forced-SA run measures SA round trips, not sa_rate.
  cat >"$work/ibatd.toml" <<'TOML'
log_level = "warn"
[policy]
sa_rate = 1000000
sa_burst = 100000
[snapshot]
cache_file = ""
TOML
  local ibatd lab
  ibatd=$(cd "$BIN_DIR" && pwd)/ibatd lab=$PWD/lab/ibat-lab
  (cd "$work" && exec "$lab" run --name "$name" --node $node -- "$ibatd" \
     --config "$work/ibatd.toml" --socket "$work/ibatd.sock" --acm-socket "" 2>"$work/ibatd.log" >/dev/null) &
  daemon=$!
  local dgids
  dgids=$(lab/ibat-lab hosts --name "$name" --json |
    python3 -c 'import json,sys; print(",".join(h["gid"] for h in json.load(sys.stdin) if h["node"] != sys.argv[1]))' $node)
  local first=${dgids%%,*} deadline=$((SECONDS + 30))
  until "$BIN_DIR/ibat" --socket "$work/ibatd.sock" resolve --dgid "$first" --timeout 2000 >/dev/null 2>&1; do
    kill -0 "$daemon" 2>/dev/null || { echo "bench: ibatd exited: $(tail -5 "$work/ibatd.log")" >&2; return 1; }
    ((SECONDS < deadline)) || { echo "bench: ibatd does not resolve after 30 s: $(tail -5 "$work/ibatd.log")" >&2; return 1; }
    sleep 0.2
  done
  echo "\$ $BIN_DIR/ibat-bench --json --socket $work/ibatd.sock --dgids <31 GIDs>"
  "$BIN_DIR/ibat-bench" --json --socket "$work/ibatd.sock" --dgids "$dgids" | tee "$BIN_DIR/../ibat-bench.json"
}

for bench in "${BENCHES[@]}"; do
  echo "== $bench"
  case $bench in
    ibat-bench) run_ibat_bench ;;
    ibat-memory) BIN_DIR=$BIN_DIR scripts/bench-memory.sh ;;
    *) "$BIN_DIR/$bench" "$@" ;;
  esac
done
