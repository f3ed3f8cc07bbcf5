#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Produces the default-config rows of docs/scale.md's first table ("What ibat costs the SA, default
# config") and of docs/operations.md's SA-load table: for each N, ibat-sim with no flag beyond the
# workload's own (default Policy, prefetch = subnet, one SA thread, the daemons' monitors with HCA
# events), R = 16: job-start cold (--warm-s 0) and warm (--warm-s 600), boot, sm-restart with the
# LIDs kept and with new LIDs (120 s, SM restart at 20 s, SA down 2 s), and an idle hour. One
# simulation at a time, nice'd. Rows go to docs/scale/defaults.jsonl (replacing a row of the same
# N and run), each with the commit it was measured at; the sm-restart --lid-change runs also write
# their time series to docs/scale/defaults-lid-change-N.csv (1 s buckets). Then prints the table.
# Needs a Release ibat-sim (cmake --preset release && cmake --build --preset release --target ibat-sim).
# Usage: scripts/scale-defaults.sh            SIZES="500 1000 2000" (the default; keep N <= 2,000 on a
#   shared machine: 4,000 takes 2-5 GB and minutes, 10,000 12-20 GB and 4-20 min a run)
#   SKIP_RUNS=1: only print the table     ONLY="boot": only the runs whose label matches (grep -E)
#   SIM=path/to/ibat-sim   COMMIT=abc1234 (default: git rev-parse --short HEAD of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=docs/scale
ROWS=$OUT/defaults.jsonl
SIM=${SIM:-build/bin/ibat-sim}
SIZES=${SIZES:-"500 1000 2000"}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT"
touch "$ROWS"

run() {  # label args...
  local label=$1
  shift
  if [ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$label"; then return 0; fi
  /usr/bin/time -f "%e %M" -o "$OUT/.time" nice "$SIM" "$@" --json >"$OUT/.run.json"
  read -r wall rss_kib <"$OUT/.time"
  python3 - "$ROWS" "$OUT/.run.json" "$label" "$wall" "$rss_kib" "$COMMIT" "ibat-sim $*" <<'PY'
import json, sys
rows_file, run_file, label, wall, rss, commit, command = sys.argv[1:]
new = json.load(open(run_file))
new.update(run=label, time_wall_s=float(wall), time_rss_kib=int(rss), commit=commit,
           command=command + " --json")
rows = [json.loads(l) for l in open(rows_file) if l.strip()]
at = next((i for i, j in enumerate(rows) if (j["nodes"], j["run"]) == (new["nodes"], label)), len(rows))
rows[at:at + 1] = [new]
open(rows_file, "w").write("".join(json.dumps(j) + "\n" for j in rows))
PY
  echo "$label N=$n: $wall s wall, $rss_kib KiB max RSS" >&2
}

if [ -z "${SKIP_RUNS:-}" ]; then
  for n in $SIZES; do
    run "job-start cold" --workload job-start --nodes "$n" --ranks 16 --warm-s 0
    run "job-start warm" --workload job-start --nodes "$n" --ranks 16 --warm-s 600
    run "boot" --workload boot --nodes "$n"
    run "sm-restart, same LIDs" --workload sm-restart --nodes "$n" --ranks 16 --duration-s 120 \
      --sm-restart-at 20 --sa-down-s 2
    run "sm-restart --lid-change" --workload sm-restart --lid-change --nodes "$n" --ranks 16 \
      --duration-s 120 --sm-restart-at 20 --sa-down-s 2 --csv "$OUT/defaults-lid-change-$n.csv"
    run "idle 1 h" --workload idle --nodes "$n" --duration-s 3600
  done
  rm -f "$OUT/.time" "$OUT/.run.json"
fi

python3 - "$ROWS" <<'PY'
import json, sys
order = ["job-start cold", "job-start warm", "boot", "sm-restart, same LIDs", "sm-restart --lid-change", "idle 1 h"]
rows = sorted((json.loads(l) for l in open(sys.argv[1]) if l.strip()), key=lambda j: (j["nodes"], order.index(j["run"])))
print("| N | run | SA queries (GETs + monitor MADs) | GetTables (PathRecord / NodeRecord + SwitchInfoRecord) | SA busy s | SA busy | done s | / floor | failures | old DLID served | in use new s | all new s | commit | wall s | peak RSS MB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for j in rows:
    n = j["nodes"]
    floor_s = n * (n - 1) * 3.33e-6  # the SA's work for every path once, by GetTables
    timed = j["workload"] in ("job-start", "boot") and j["completion_s"] > 0
    opt = lambda k: "—" if k not in j else ("not by the end" if j[k] is None else "{:.2f}".format(j[k]))
    print("| {:,} | {} | {:,} | {:,} / {:,} | {:.2f} | {:.3f} % | {} | {} | {:,} | {:,} | {} | {} | {} | {:.0f} | {:.0f} |".format(
        n, j["run"], j["sa_queries"], j["sa_tables"], j["sa_switch_tables"], j["sa_busy_s"],
        100 * j["sa_busy_fraction"], "{:.2f}".format(j["completion_s"]) if timed else "—",
        "{:.2f}".format(j["completion_s"] / floor_s) if timed else "—", j["failures"], j["stale_lid_served"],
        opt("in_use_renewed_s"), opt("all_renewed_s"), j["commit"], j["time_wall_s"], j["time_rss_kib"] / 1024))
PY
