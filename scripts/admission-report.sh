#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Produces the table-admission figures of docs/scale.md ("Admission"): for each N, job-start cold
# (--warm-s 0) and boot with the default SA model (one thread), with 4 SA threads, and with an SA
# 4 x faster per record (--sa-rate 235294), R = 16, the default Policy, one simulation at a time;
# then prints one markdown row per run with its time against the SA's own floor (every path of
# the subnet computed once: record_us x N^2 / threads). Nothing but the SA changes between the
# three: a closed-loop admission follows the SA it has, an open-loop one stays at its assumed speed.
# Needs a Release ibat-sim (cmake --preset release && cmake --build build --target ibat-sim).
# Usage: scripts/admission-report.sh   SIZES="1000 4000" (default "4000")   SIM=build/bin/ibat-sim
set -euo pipefail
cd "$(dirname "$0")/.."
SIM=${SIM:-build/bin/ibat-sim}
SIZES=${SIZES:-"4000"}
[ -x "$SIM" ] || { echo "admission-report: $SIM not found: cmake --preset release && cmake --build build --target ibat-sim" >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

echo "| N | run | SA | completion s | SA floor s | / floor | failed connects | overload drops | GET MAD timeouts | probes |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in $SIZES; do
  for sa in "" "--sa-threads 4" "--sa-rate 235294"; do
    for workload in "job-start --ranks 16 --warm-s 0" "boot"; do
      # shellcheck disable=SC2086  # the SA and workload options are words
      nice "$SIM" --strategy ibat --nodes "$n" --workload $workload $sa --json >"$tmp"
      python3 - "$tmp" "${workload%% *}" "${sa:-one thread}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
floor = j["sa_record_us"] * 1e-6 * j["nodes"] ** 2 / j["sa_threads"]
print(f"| {j['nodes']:,} | {sys.argv[2]} | {sys.argv[3]} | {j['completion_s']:.2f} | {floor:.2f} | "
      f"{j['completion_s'] / floor:.2f} | {j['failures']:,} | {j['sa_overload_dropped']:,} | "
      f"{j['get_timeouts']:,} | {j['table_probes']:,} |")
PY
    done
  done
done
