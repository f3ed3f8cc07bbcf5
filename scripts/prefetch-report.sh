#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Produces the prefetch table of docs/scale.md ("Subnet prefetch"): for each N, job-start cold
# (--warm-s 0) and after a 10-minute warm-up, boot (and, prefetch on, both again with daemons that
# know the subnet's size from their warm cache: --known-subnet), sm-restart with new LIDs and an idle hour,
# each with --prefetch subnet (the default) and --prefetch off, R = 16, the default SA model (one
# thread), one simulation at a time, nice'd; then prints the table (markdown) with the goals.
# Needs a Release ibat-sim (cmake --preset release && cmake --build build --target ibat-sim).
# Usage: scripts/prefetch-report.sh [OUT_DIR]   (default docs/scale)   SIZES="1000 4000"
#   SKIP_RUNS=1: only print the table from OUT_DIR/prefetch.jsonl
#   ONLY="sm-restart": run only the runs whose label matches (grep -E), replacing their rows
#   PREFETCHES="subnet": only those --prefetch values (default "subnet off")
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs/scale}
SIM=${SIM:-build/bin/ibat-sim}
SIZES=${SIZES:-"1000"}
mkdir -p "$OUT"

run() {  # label prefetch args...
  local label=$1 prefetch=$2
  shift 2
  if [ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$label"; then return 0; fi
  /usr/bin/time -f "%e %M" -o "$OUT/.time" nice "$SIM" "$@" --prefetch "$prefetch" --json >"$OUT/.run.json"
  read -r wall rss_kib <"$OUT/.time"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["run"]=sys.argv[2]; j["time_wall_s"]=float(sys.argv[3]); j["time_rss_kib"]=int(sys.argv[4]); print(json.dumps(j))' \
    "$OUT/.run.json" "$label" "$wall" "$rss_kib" >"$OUT/.row.json"
  python3 - "$OUT/prefetch.jsonl" "$OUT/.row.json" <<'PY'
import json, sys
new = json.load(open(sys.argv[2]))
same = lambda j: (j["nodes"], j["run"], j["prefetch"]) == (new["nodes"], new["run"], new["prefetch"])
rows = [json.loads(l) for l in open(sys.argv[1])]
at = next((i for i, j in enumerate(rows) if same(j)), len(rows))
rows[at:at + 1] = [new]
open(sys.argv[1], "w").write("".join(json.dumps(j) + "\n" for j in rows))
PY
  echo "$label N=$n prefetch=$prefetch: $wall s wall, $rss_kib KiB max RSS" >&2
}

if [ -z "${SKIP_RUNS:-}" ]; then
  [ -n "${ONLY:-}" ] || : >"$OUT/prefetch.jsonl"
  touch "$OUT/prefetch.jsonl"
  for n in $SIZES; do
    for p in ${PREFETCHES:-subnet off}; do
      run "job-start cold" "$p" --workload job-start --nodes "$n" --ranks 16 --warm-s 0
      run "job-start warm" "$p" --workload job-start --nodes "$n" --ranks 16 --warm-s 600
      [ "$p" = subnet ] && run "job-start warm, warm cache" "$p" --workload job-start --nodes "$n" --ranks 16 --warm-s 600 --known-subnet
      run "boot" "$p" --workload boot --nodes "$n"
      [ "$p" = subnet ] && run "boot, warm cache" "$p" --workload boot --nodes "$n" --known-subnet
      run "sm-restart --lid-change" "$p" --workload sm-restart --lid-change --nodes "$n" --ranks 16 \
        --duration-s 120 --sm-restart-at 20 --sa-down-s 2
      run "idle 1 h" "$p" --workload idle --nodes "$n" --duration-s 3600
    done
  done
  rm -f "$OUT/.time" "$OUT/.run.json" "$OUT/.row.json"
fi

python3 - "$OUT/prefetch.jsonl" <<'PY'
import json, sys
order = ["job-start cold", "job-start warm", "job-start warm, warm cache", "boot", "boot, warm cache",
         "sm-restart --lid-change", "idle 1 h"]
rows = sorted((json.loads(l) for l in open(sys.argv[1])),
              key=lambda j: (j["nodes"], j["prefetch"] != "subnet", order.index(j["run"])))
def num(x, f="{:,.0f}"):
    return "—" if x is None else f.format(x)
print("| N | run | prefetch | PathRecord GETs | GetTables (PathRecord / NodeRecord + SwitchInfoRecord) | monitor MADs | overload drops | failures | old DLID served | completion s | / floor | p99 ms | in use new s | all new s | SA busy | tables failed | wall s | peak RSS MB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for j in rows:
    n = j["nodes"]
    floor_s = n * (n - 1) * 3.33e-6
    completion = j["completion_s"] if j["workload"] != "idle" else None
    floored = j["workload"] in ("job-start", "boot")  # the floor is that of giving every host every path
    gets = j["sa_queries"] - j["monitor_remote_mads"]
    renewed = lambda k: ("not by the end" if j.get(k, 0) is None else num(j.get(k), "{:.2f}")) if k in j else "—"
    print("| {:,} | {} | {} | {:,} | {:,} / {:,} | {:,} | {:,} | {:,} | {:,} | {} | {} | {} | {} | {} | {:.3f} % | {:,} | {:.0f} | {:.0f} |".format(
        n, j["run"], j["prefetch"], gets, j["sa_tables"], j["sa_switch_tables"], j["monitor_remote_mads"],
        j["sa_overload_dropped"], j["failures"], j["stale_lid_served"], num(completion, "{:.2f}"),
        num(completion / floor_s if floored else None, "{:.2f}"), num(j["resolve_p99_ms"], "{:,.1f}"),
        renewed("in_use_renewed_s"), renewed("all_renewed_s"), 100 * j["sa_busy_fraction"], j["tables_failed"],
        j["time_wall_s"], j["time_rss_kib"] / 1024))
PY
