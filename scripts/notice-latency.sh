#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# notice-latency.sh IBATD TOPOLOGY [idle|load]: how long one ibatd takes to notice each SM fault
# (the time from starting `ibat-lab sm ...` (for a SIGKILL: the start 2 s later) to the daemon's first "SM changed" or "local port"
# log line), and how many MADs it sent to its own port and to the SM/SA meanwhile. `load` runs
# ibat-load at 300 requests/s (5 % FORCE_SA) through the daemon during the faults. Prints one
# table row per fault for docs/reliability.md. Needs ibat-load next to IBATD.
set -euo pipefail
IBATD=$(realpath "$1"); TOPOLOGY=$(realpath "$2"); MODE=${3:-idle}
BIN=$(dirname "$IBATD"); LAB=$(dirname "$0")/../lab/ibat-lab
name=nl-$$; dir=$(mktemp -d /tmp/ibat-notice.XXXXXX)
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=0}
stop_all() {
  [[ -n ${LOAD_PID:-} ]] && kill "$LOAD_PID" 2>/dev/null || true
  [[ -n ${DAEMON_PID:-} ]] && kill "$DAEMON_PID" 2>/dev/null || true
  LOAD_PID=""; DAEMON_PID=""
  "$LAB" down --name "$name" >/dev/null 2>&1 || true
}
cleanup() { stop_all; rm -rf "$dir"; }
trap cleanup EXIT

# setup [UP ARGS...]: the fabric, ibatd on h0005 (500 ms polls), the load if asked, 5 s to settle
setup() {
  "$LAB" up --name "$name" --topology "$TOPOLOGY" --sm-node h0000 "$@" >/dev/null
  printf 'log_level = "info"\n[fabric]\npoll_interval_ms = 500\n' >"$dir/ibatd.toml"
  rm -f "$dir/d.sock" "$dir/d.err"
  (exec "$LAB" run --name "$name" --node h0005 -- "$IBATD" --config "$dir/ibatd.toml" --socket "$dir/d.sock" --acm-socket "" \
     --cache-file "$dir/d.cache" 2>"$dir/d.err" >/dev/null) &
  DAEMON_PID=$!
  until [[ -S $dir/d.sock ]]; do sleep 0.1; done
  "$LAB" hosts --name "$name" --json | python3 -c 'import json,sys; [print(h["gid"]) for h in json.load(sys.stdin)]' >"$dir/dgids"
  if [[ $MODE == load ]]; then
    "$BIN/ibat-load" --socket "$dir/d.sock" --dgids "$dir/dgids" --connections 2 --depth 4 --rate 300 \
      --uncached-share 0.05 --timeout-ms 15000 --duration 3600 --json >/dev/null 2>&1 &
    LOAD_PID=$!
  fi
  sleep 5
}

counters() {
  "$BIN/ibat" --socket "$dir/d.sock" stats --json 2>/dev/null |
    python3 -c 'import json,sys; f=json.load(sys.stdin)["fabric"]; print(f.get("local_mads_sent", "-"), f.get("remote_mads_sent", "-"), f["mads_sent"])'
}

# fault LABEL ARGS...: runs `ibat-lab sm ARGS`, waits (<= 150 s) for the daemon to log a change
fault() {
  local label=$1; shift
  read -r l0 r0 m0 < <(counters)
  local t0; t0=$(date +%s.%N)
  "$LAB" sm --name "$name" "$@" >/dev/null
  local noticed=""
  for _ in $(seq 1500); do
    noticed=$(python3 - "$dir/d.err" "$t0" <<'PY'
import datetime, re, sys
t0 = float(sys.argv[2])
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*(SM changed|local port)", line)
    if m:
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        if t >= t0:
            print(f"{(t - t0) * 1000:.0f}"); break
PY
)
    [[ -n $noticed ]] && break
    sleep 0.1
  done
  read -r l1 r1 m1 < <(counters)
  local d_local="-" d_remote="-"
  [[ $l0 != - ]] && d_local=$((l1 - l0)) && d_remote=$((r1 - r0))
  echo "| $label | $MODE | ${noticed:-not within 150 s} | $((m1 - m0)) | $d_local | $d_remote |"
  sleep 5
}

echo "| fault | daemon | noticed after (ms) | MADs sent meanwhile | local | remote |"
echo "|---|---|---|---|---|---|"
setup
fault "sm restart (same LIDs)" restart
"$LAB" sm --name "$name" kill >/dev/null
sleep 2
fault "sm start after SIGKILL and 2 s without SM" start
fault "sm restart --new-lids" restart --new-lids
stop_all
setup --standby-sm h0031
fault "sm failover (h0000 -> h0031)" failover
