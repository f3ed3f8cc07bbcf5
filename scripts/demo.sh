#!/usr/bin/env bash
# `make demo`: ibat on a simulated 32-host fat tree. Starts a lab fabric (OpenSM on ibsim), runs
# ibatd on two hosts, resolves paths with the `ibat` CLI, restarts the SM while clients keep
# resolving, and prints a summary from both daemons' counters. Exits 1 if any request failed.
# The fabric and the daemons are always stopped on exit. Binaries: $BIN_DIR (default build/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$root/build/bin}
LAB=$root/lab/ibat-lab
IBAT=$BIN_DIR/ibat
IBATD=$BIN_DIR/ibatd
LOAD_SECONDS=${LOAD_SECONDS:-10}   # how long the clients resolve; the SM restarts in the middle
NODES=(h0001 h0017)                # the two hosts running ibatd (on different leaf switches)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

shared=$(cd "$root/../shared" 2>/dev/null && pwd) ||
  die "the shared folder is missing: expected $root/../shared (with topologies/fattree-32.net) next to the repository"
topology=$shared/topologies/fattree-32.net
[[ -f $topology ]] || die "topology not found: $topology"
for binary in "$IBAT" "$IBATD"; do
  [[ -x $binary ]] || die "$binary is not built; run 'make demo' (or: cmake --preset release && cmake --build --preset release)"
done

name=demo-$$
work=$(mktemp -d /tmp/ibat-demo.XXXXXX)
declare -A DAEMON_PID
LOOP_PIDS=()
cleanup() {
  local pid
  for pid in "${LOOP_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${DAEMON_PID[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${DAEMON_PID[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$LAB" down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# ibat_on NODE ARGS...: the CLI against the daemon of NODE
ibat_on() { local node=$1; shift; "$IBAT" --socket "$work/$node.sock" "$@"; }

say "1. Fabric: OpenSM on ibsim, topology $(basename "$topology") (32 hosts, 6 switches)"
"$LAB" up --name "$name" --topology "$topology"
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
     --socket "$work/$node.sock" --cache-file "$work/$node.cache" >/dev/null 2>"$work/$node.log") &
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
  sed -n 's/^[[:space:]]*dlid\.*\(0x[0-9a-f]*\|[0-9]*\)$/\1/p' | head -1)
echo "(saquery, asking OpenSM directly, gives DLID $((saquery_dlid)) for h0020: the same)"
echo "\$ ibat paths"
ibat_on h0001 paths

say "4. OpenSM restart while clients keep resolving (${LOAD_SECONDS} s, every host from both daemons)"
# One client loop per daemon: resolves each other host in turn with the CLI, one line per request.
client_loop() {
  local node=$1 out=$2 end=$((SECONDS + LOAD_SECONDS)) dest rc
  while ((SECONDS < end)); do
    for dest in "${!GID[@]}"; do
      [[ $dest == "$node" ]] && continue
      rc=0
      ibat_on "$node" resolve --dgid "${GID[$dest]}" --timeout 5000 >/dev/null 2>>"$out.err" || rc=$?
      echo "$rc" >>"$out"
    done
  done
}
for node in "${NODES[@]}"; do
  client_loop "$node" "$work/$node.requests" &
  LOOP_PIDS+=($!)
done
sleep $((LOAD_SECONDS / 3))
echo "\$ ibat-lab sm restart"
"$LAB" sm --name "$name" restart
wait "${LOOP_PIDS[@]}"
LOOP_PIDS=()

say "5. Summary"
for node in "${NODES[@]}"; do ibat_on "$node" stats --json >"$work/$node.stats"; done
python3 - "$work" "${NODES[@]}" <<'PY'
import collections, json, sys
work, nodes = sys.argv[1], sys.argv[2:]
print("%-8s %9s %9s %11s %11s %11s %10s %11s" % ("DAEMON", "RESOLVES", "FAILURES", "CACHE_HITS",
      "STALE_HITS", "SA_QUERIES", "COALESCED", "SM_CHANGES"))
daemon_failures = 0
for node in nodes:
    s = json.load(open(f"{work}/{node}.stats"))
    daemon_failures += s["failures"]["total"]
    print("%-8s %9d %9d %11d %11d %11d %10d %11d" % (node, s["resolves"], s["failures"]["total"],
          s["cache_hits"], s["stale_hits"], s["sa_queries"], s["coalesced"], s["sm_changes"]))
codes = collections.Counter()
for node in nodes:
    codes.update(line.strip() for line in open(f"{work}/{node}.requests"))
requests, failed = sum(codes.values()), sum(n for code, n in codes.items() if code != "0")
print(f"\nclient requests while the SM restarted: {requests}, failed: {failed}")
if failed or daemon_failures:
    exits = ", ".join(f"exit {code}: {n}" for code, n in sorted(codes.items()) if code != "0")
    print(f"FAILED: {failed} client requests failed ({exits or 'none'}); "
          f"the daemons counted {daemon_failures} failures", file=sys.stderr)
    sys.exit(1)
print("OK: every request got a path, through the SM restart too (0 failures).")
PY
