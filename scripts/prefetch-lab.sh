#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# How fast a fresh ibatd with the default config holds the whole subnet, and how fast it has every
# path new after an SM restart with new LIDs, on the real OpenSM over the kernel MAD layer twin, on
# a 480-host fat tree (504 end ports). Per run: a fabric, one ibatd on h0003, `sm restart
# --new-lids`. Figures from the logs' own clocks (same host): port known -> the GetTable's paths
# cached (ibatd's "local port" and "subnet paths" lines), OpenSM's SUBNET UP after the restart ->
# the next "subnet paths" line, and the daemon's PathRecord GETs and GetTables; and, for 40 paths
# in use (resolved through the CLI just before the restart), OpenSM's SUBNET UP -> the moment the
# last of them carries its new DLID in the cache (polled with `ibat paths --json` every ~0.1 s, on this host's
# clock as the logs are).
# Prints one JSON object. RUNS (default 3); BIN_DIR (default build/bin) holds ibatd and ibat.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$root/build/bin}
RUNS=${RUNS:-3}
L=$root/lab/ibat-lab
tmp=$(mktemp -d)
name=
cleanup() {
  [[ -z $name ]] || "$L" down --name "$name" >/dev/null 2>&1 || true
  pkill -f "$tmp/d.sock" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=0}
"$L" topology fattree --spines 4 --leaves 20 --hosts-per-leaf 24 --output "$tmp/tree.net"
printf '[snapshot]\ninterval_s = 0\n' >"$tmp/d.toml"
stats() { "$BIN_DIR/ibat" --socket "$tmp/d.sock" stats --json; }
field() { python3 -c 'import json,sys; print(eval(sys.argv[1], {"j": json.loads(sys.stdin.read())}))' "$1"; }
wait_for() {  # wait_for PYTHON-EXPR-OVER-STATS
  local deadline=$((SECONDS + 60))
  until [[ $(stats 2>/dev/null | field "$1" 2>/dev/null) == True ]]; do
    ((SECONDS < deadline)) || { echo "prefetch-lab: timed out waiting for $1" >&2; exit 1; }
    sleep 0.1
  done
}
for run in $(seq 1 "$RUNS"); do
  name=prefetch-$$-$run
  "$L" up --name "$name" --topology "$tmp/tree.net" >/dev/null
  rm -f "$tmp/d.sock" "$tmp/d.err"
  "$L" run --name "$name" --node h0003 -- "$BIN_DIR/ibatd" --config "$tmp/d.toml" --socket "$tmp/d.sock" --acm-socket "" \
    --cache-file "$tmp/d.cache" 2>"$tmp/d.err" >/dev/null &
  wait_for 'j["sa_tables_answered"] >= 1'
  # 40 paths in use: every 12th host, resolved once now (a request used them within the minute)
  "$L" hosts --name "$name" --json | python3 -c 'import json,sys; print("\n".join(h["gid"] for i, h in enumerate(json.load(sys.stdin)) if i % 12 == 5))' >"$tmp/in-use-$run.txt"
  while read -r dgid; do "$BIN_DIR/ibat" --socket "$tmp/d.sock" resolve --dgid "$dgid" --json; done <"$tmp/in-use-$run.txt" >"$tmp/in-use-old-$run.jsonl"
  start_stats=$(stats)
  python3 - "$BIN_DIR/ibat" "$tmp/d.sock" "$tmp/in-use-old-$run.jsonl" "$tmp/in-use-new-$run.txt" <<'PY' &
import datetime, json, subprocess, sys, time
ibat, sock, old_file, out = sys.argv[1:5]
old = {j["dgid"]: j["dlid"] for j in map(json.loads, open(old_file))}
deadline = time.time() + 60
while time.time() < deadline:
    paths = json.loads(subprocess.run([ibat, "--socket", sock, "paths", "--json"], capture_output=True, text=True).stdout or "[]")
    # carrying its new DLID, whatever its state (an SM change seen after the GET's answer marks it
    # stale until the table refreshes it; it is served with that DLID meanwhile)
    new = sum(1 for p in paths if p["dgid"] in old and p["dlid"] not in (0, old[p["dgid"]]))
    if new == len(old):
        open(out, "w").write(datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f") + "\n")
        break
    time.sleep(0.05)
PY
  watcher=$!
  "$L" sm restart --name "$name" --new-lids >/dev/null
  deadline=$((SECONDS + 60))  # until the log has a table answer after the SM change
  until sed -n '/SM changed/,$p' "$tmp/d.err" | grep -q "subnet paths: "; do
    ((SECONDS < deadline)) || { echo "prefetch-lab: no GetTable after the SM change" >&2; exit 1; }
    sleep 0.1
  done
  wait "$watcher" || true
  end_stats=$(stats)
  cp "$tmp/d.err" "$tmp/ibatd-$run.log"
  cp "/tmp/ibat-lab/$name/opensm-primary.log" "$tmp/opensm-$run.log" 2>/dev/null ||
    cp "${IBAT_LAB_DIR:-/tmp/ibat-lab}/$name/opensm-primary.log" "$tmp/opensm-$run.log"
  echo "$start_stats" >"$tmp/start-$run.json"
  echo "$end_stats" >"$tmp/end-$run.json"
  kill %1 2>/dev/null || true
  wait 2>/dev/null || true
  "$L" down --name "$name" >/dev/null
  name=
done
python3 - "$tmp" "$RUNS" <<'PY'
import datetime, json, re, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def ibatd_time(line):
    return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f")
def opensm_up_times(path, year):
    out = []
    for line in open(path):
        m = re.match(r"(\w{3} \d\d \d\d:\d\d:\d\d) (\d{6}) .*SUBNET UP", line)
        if m:
            t = datetime.datetime.strptime(f"{year} {m.group(1)}", "%Y %b %d %H:%M:%S")
            out.append(t + datetime.timedelta(microseconds=int(m.group(2))))
    return out
def in_use_ms(r, up):  # None: the 40 paths in use were not all new within 60 s
    try:
        t = datetime.datetime.strptime(open(f"{tmp}/in-use-new-{r}.txt").read().strip(), "%Y-%m-%d %H:%M:%S.%f")
    except FileNotFoundError:
        return None
    return round((t - up).total_seconds() * 1e3, 1)
result = {"runs": runs, "topology": "fattree 4 spines x 20 leaves x 24 hosts (504 end ports)", "per_run": []}
for r in range(1, runs + 1):
    lines = open(f"{tmp}/ibatd-{r}.log").read().splitlines()
    port = next(ibatd_time(l) for l in lines if " local port " in l)
    tables = [ibatd_time(l) for l in lines if " subnet paths: " in l]
    up = opensm_up_times(f"{tmp}/opensm-{r}.log", port.year)[-1]
    after = [t for t in tables if t >= up]
    start, end = json.load(open(f"{tmp}/start-{r}.json")), json.load(open(f"{tmp}/end-{r}.json"))
    result["per_run"].append({
        "start_port_to_paths_ms": round((tables[0] - port).total_seconds() * 1e3, 1),
        "start_entries": start["entries"], "start_path_gets": start["sa_queries"], "start_tables": start["sa_tables"],
        "restart_subnet_up_to_paths_ms": round((after[0] - up).total_seconds() * 1e3, 1) if after else None,
        "restart_subnet_up_to_in_use_new_ms": in_use_ms(r, up),
        "restart_path_gets": end["sa_queries"] - start["sa_queries"],
        "restart_tables_sent": end["sa_tables"] - start["sa_tables"],
        "restart_tables_answered": end["sa_tables_answered"] - start["sa_tables_answered"],
        "failures": end["failures"]["total"]})
print(json.dumps(result, indent=1))
PY
