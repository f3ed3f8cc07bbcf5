#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Produces the SA congestion-control figures of docs/scale.md: job-start with R=16 under three
# pacings (fixed: the token bucket alone; oracle: 0.8 x sa_rate / N per node; adaptive: the
# default Policy's SaPacer), churn and sm-restart with the default Policy, and a plot of SA load
# over time. Runs one simulation at a time, nice'd. Needs a Release ibat-sim (cmake --preset release).
# Usage: scripts/pace-report.sh [OUT_DIR]   (default docs/scale)   SIZES="1000 4000" PACES=...
#   SKIP_JOB_START=1: only churn, sm-restart and the plot (from the job-start CSVs already there)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs/scale}
SIM=${SIM:-build/bin/ibat-sim}
# The published tables were measured with 20 us a GET (50,000/s); the model's defaults now
# charge 17 us a query + 3.33 us a record (docs/simulator.md, "What the SA spends"), and GETs only:
# they predate the subnet prefetch, now the Resolver's default (scripts/prefetch-report.sh).
SA_MODEL=${SA_MODEL:---sa-rate 50000 --prefetch off}
SIZES=${SIZES:-"1000 4000"}
PACES=${PACES:-"adaptive oracle fixed"}
PLOT_N=${PLOT_N:-${SIZES%% *}}
# The fixed bucket collapses into resends (~12 x the events of the other pacings at N=1,000):
# it is run up to this size only.
FIXED_MAX_N=${FIXED_MAX_N:-1000}
mkdir -p "$OUT"

if [ -z "${SKIP_JOB_START:-}" ]; then
: >"$OUT/pace-job-start.jsonl"
for n in $SIZES; do
  for p in $PACES; do
    if [ "$p" = fixed ] && [ "$n" -gt "$FIXED_MAX_N" ]; then continue; fi
    /usr/bin/time -f "%e %M" -o "$OUT/.time" nice "$SIM" $SA_MODEL --workload job-start --nodes "$n" --ranks 16 \
      --strategy ibat --pace "$p" --csv "$OUT/pace-job-start-$n-$p.csv" --json >>"$OUT/pace-job-start.jsonl"
    echo "job-start N=$n pace=$p: $(cat "$OUT/.time") (wall s, max RSS KiB)" >&2
  done
done
rm -f "$OUT/.time"
fi

# The same defaults under steady traffic and through an SM restart (SA down 2 s at 20 s).
nice "$SIM" $SA_MODEL --workload churn --nodes 1000 --ranks 16 --strategy ibat --duration-s 60 --bucket-ms 200 \
  --csv "$OUT/pace-churn.csv" --json >"$OUT/pace-churn.json"
nice "$SIM" $SA_MODEL --workload sm-restart --nodes 1000 --ranks 16 --strategy ibat --duration-s 60 \
  --sm-restart-at 20 --sa-down-s 2 --bucket-ms 200 --csv "$OUT/pace-sm-restart.csv" --json \
  >"$OUT/pace-sm-restart.json"

PLOT_PACES=$PACES
if [ "$PLOT_N" -gt "$FIXED_MAX_N" ]; then PLOT_PACES=${PACES//fixed/}; fi
gnuplot <<GP
set terminal svg size 900,560 noenhanced
set output "$OUT/pace-sa-load.svg"
set multiplot layout 2,1 title "job-start, N=$PLOT_N nodes x 16 ranks, SA 50,000 PathRecords/s (1 s buckets)"
set datafile separator ","
set key top right
set xlabel "virtual time (s)"
set ylabel "SA arrivals/s"
plot for [p in "$PLOT_PACES"] sprintf("$OUT/pace-job-start-$PLOT_N-%s.csv", p) every ::1 using 1:2 with steps lw 2 title p
set ylabel "longest SA queue wait (ms)"
set logscale y
plot for [p in "$PLOT_PACES"] sprintf("$OUT/pace-job-start-$PLOT_N-%s.csv", p) every ::1 using 1:(\$7+0.01) with steps lw 2 title p
unset multiplot
GP
echo "wrote $OUT/pace-job-start.jsonl, $OUT/pace-*.csv, $OUT/pace-{churn,sm-restart}.json, $OUT/pace-sa-load.svg" >&2
