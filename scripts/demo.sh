#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# `make demo`: ibat on a simulated 32-host fat tree. Starts a lab fabric (OpenSM on ibsim), runs
# ibatd on two hosts, resolves paths with the `ibat` CLI, restarts the SM while ibat-load keeps
# resolving through both daemons, and prints a summary from ibat-load and both daemons' counters.
# Exits 1 if any request failed.
# The fabric and the daemons are always stopped on exit. Binaries: $BIN_DIR (default build/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$root/build/bin}
LAB=$root/lab/ibat-lab
IBAT=$BIN_DIR/ibat
IBATD=$BIN_DIR/ibatd
LOAD=$BIN_DIR/ibat-load
LOAD_SECONDS=${LOAD_SECONDS:-12}   # how long ibat-load resolves; the SM restarts after a third of it
LOAD_RATE=${LOAD_RATE:-2000}       # resolves per second, over both daemons
NODES=(h0001 h0017)                # the two hosts running ibatd (on different leaf switches)

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
die() { echo "demo: $*" >&2; exit 1; }

topology=$root/lab/topologies/fattree-32.net
[[ -f $topology ]] || die "topology not found: $topology"
for binary in "$IBAT" "$IBATD" "$LOAD"; do
  [[ -x $binary ]] || die "$binary is not built; run 'make demo' (or: cmake --preset release && cmake --build --preset release)"
done

name=demo-$$
work=$(mktemp -d /tmp/ibat-demo.XXXXXX)
declare -A DAEMON_PID
LOAD_PID=""
cleanup() {
  local pid
  [[ -z $LOAD_PID ]] || kill "$LOAD_PID" 2>/dev/null || true
  for pid in "${DAEMON_PID[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${DAEMON_PID[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$LAB" down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# ibat_on NODE ARGS...: the CLI against the daemon of NODE
ibat_on() { local node=$1; shift; "$IBAT" --socket "$work/$node.sock" "$@"; }

say "1. Fabric: OpenSM on ibsim, topology $(basename "$topology") (32 hosts, 6 switches)"
# One retry: OpenSM rarely exits at once on a busy machine ("exited before it was up", no log).
"$LAB" up --name "$name" --topology "$topology" ||
  { echo "demo: ibat-lab up failed, retrying once" >&2; "$LAB" up --name "$name" --topology "$topology"; }
"$LAB" hosts --name "$name" --json >"$work/hosts.json"
python3 - "$work/hosts.json" >"$work/hosts.txt" <<'PY'
import json, sys
for h in json.load(open(sys.argv[1])):
    print(h["node"], h["gid"], h["lid"])
PY
declare -A GID LID
while read -r node gid lid; do GID[$node]=$gid; LID[$node]=$lid; done <"$work/hosts.txt"
echo "$(wc -l <"$work/hosts.txt") HCA ports, e.g. h0005 has GID ${GID[h0005]} and LID ${LID[h0005]}"

say "2. ibatd on ${NODES[*]}"
cat >"$work/ibatd.toml" <<'TOML'
log_level = "info"
[policy]
revalidate_jitter_ms = 500
TOML
for node in "${NODES[@]}"; do
  (cd "$work" && exec "$LAB" run --name "$name" --node "$node" -- "$IBATD" --config "$work/ibatd.toml" \
     --socket "$work/$node.sock" --acm-socket "" --cache-file "$work/$node.cache" >/dev/null 2>"$work/$node.log") &
  DAEMON_PID[$node]=$!
done
for node in "${NODES[@]}"; do
  deadline=$((SECONDS + 30))
  until ibat_on "$node" resolve --dgid "${GID[h0005]}" --timeout 2000 >/dev/null 2>&1; do
    kill -0 "${DAEMON_PID[$node]}" 2>/dev/null || die "ibatd on $node exited; its log:$(printf '\n'; tail -20 "$work/$node.log")"
    ((SECONDS < deadline)) || die "ibatd on $node does not resolve after 30 s; its log:$(printf '\n'; tail -20 "$work/$node.log")"
    sleep 0.2
  done
  echo "ibatd on $node (pid ${DAEMON_PID[$node]}) serves $work/$node.sock"
done

say "3. Resolving with the ibat CLI (from h0001)"
for dest in h0005 h0020 h0031; do
  echo "\$ ibat resolve --dgid ${GID[$dest]}      # $dest"
  ibat_on h0001 resolve --dgid "${GID[$dest]}"
done
echo "\$ ibat resolve --dlid ${LID[h0009]} --json    # h0009 by LID"
ibat_on h0001 resolve --dlid "${LID[h0009]}" --json
saquery_dlid=$("$LAB" run --name "$name" --node h0001 -- saquery -p --sgid-to-dgid "${GID[h0001]}-${GID[h0020]}" 2>/dev/null |
  sed -n 's/^[[:space:]]*dlid\.*\([0-9]*\)$/\1/p' | head -1)
ibat_dlid=$(ibat_on h0001 resolve --dgid "${GID[h0020]}" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["dlid"])')
[[ $saquery_dlid == "$ibat_dlid" ]] || die "saquery gives DLID '$saquery_dlid' for h0020, ibat $ibat_dlid"
echo "(saquery, asking OpenSM directly, gives the same DLID $saquery_dlid for h0020)"
echo "\$ ibat paths"
ibat_on h0001 paths

say "4. OpenSM restart while ibat-load keeps resolving (${LOAD_SECONDS} s, 30 hosts through both daemons)"
# ibat-load accounts for every request: answered exactly once, with the DLID given here.
for node in "${!GID[@]}"; do
  [[ " ${NODES[*]} " == *" $node "* ]] || echo "${GID[$node]} ${LID[$node]}"
done >"$work/destinations"
for node in "${NODES[@]}"; do ibat_on "$node" stats --json >"$work/$node.before"; done
"$LOAD" --socket "$work/${NODES[0]}.sock" --socket "$work/${NODES[1]}.sock" --dgids "$work/destinations" \
  --connections 4 --depth 8 --rate "$LOAD_RATE" --duration "$LOAD_SECONDS" --expect-exists --json \
  >"$work/load.json" 2>"$work/load.err" &
LOAD_PID=$!
sleep $((LOAD_SECONDS / 3))
echo "\$ ibat-lab sm restart      # while ibat-load sends ${LOAD_RATE} resolves/s"
"$LAB" sm --name "$name" restart
load_rc=0
wait "$LOAD_PID" || load_rc=$?
LOAD_PID=""
((load_rc <= 1)) || die "ibat-load failed (exit $load_rc): $(cat "$work/load.err")"

say "5. Summary"
for node in "${NODES[@]}"; do ibat_on "$node" stats --json >"$work/$node.after"; done
python3 - "$work" "${NODES[@]}" <<'PY'
import json, sys
work, nodes = sys.argv[1], sys.argv[2:]
print("Daemon counters during step 4 (ibat stats --json, after minus before):")
print("%-8s %9s %9s %11s %11s %11s %11s" % ("DAEMON", "RESOLVES", "FAILURES", "CACHE_HITS",
      "STALE_HITS", "SA_QUERIES", "SM_CHANGES"))
daemon_failures = 0
for node in nodes:
    before, after = (json.load(open(f"{work}/{node}.{when}")) for when in ("before", "after"))
    d = {k: after[k] - before[k] for k in ("resolves", "cache_hits", "stale_hits", "sa_queries", "sm_changes")}
    d["failures"] = after["failures"]["total"] - before["failures"]["total"]
    daemon_failures += d["failures"]
    print("%-8s %9d %9d %11d %11d %11d %11d" % (node, d["resolves"], d["failures"], d["cache_hits"],
          d["stale_hits"], d["sa_queries"], d["sm_changes"]))
load = json.load(open(f"{work}/load.json"))
lat = load["latency_ms"]
print(f"\nibat-load during the SM restart: {load['sent']} requests, {load['ok']} paths, "
      f"{load['failures_total']} failures, {load['unanswered']} unanswered, {load['dlid0']} with DLID 0, "
      f"{load['wrong_dlid']} with a wrong DLID; latency p50 {lat['p50']} ms, p99 {lat['p99']} ms")
failed = load["failures_total"] + load["unanswered"] + load["dlid0"] + load["wrong_dlid"] + load["answered_twice"]
if failed or daemon_failures or not load["passed"]:
    print(f"FAILED: {failed} bad answers ({load['failures']}), the daemons counted {daemon_failures} failures; "
          f"violations: {load['violations']}", file=sys.stderr)
    sys.exit(1)
print("OK: every request got a path, through the SM restart too (0 failures).")
PY
