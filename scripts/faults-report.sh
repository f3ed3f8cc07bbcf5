#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Runs the fault-injection suite (ctest label `faults`) and prints the markdown table of
# docs/reliability.md from the ibat-load JSON summaries the scenarios record.
#   scripts/faults-report.sh [BUILD_DIR]     (default build-test; needs ibatd and ibat-load built)
# Exit code: ctest's (the table is printed either way, from the scenarios that ran).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-test}
results=$(mktemp -d /tmp/ibat-faults-report.XXXXXX)
trap 'rm -rf "$results"' EXIT

rc=0
IBAT_FAULTS_REPORT_DIR=$results ctest --test-dir "$build" -L faults --output-on-failure >"$results/ctest.log" 2>&1 || rc=$?
grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|^FAIL: ' "$results/ctest.log" >&2 || true
if [[ $rc -ne 0 ]]; then
  cp "$results/ctest.log" /tmp/ibat-faults-ctest.log
  echo "ctest failed (exit $rc): full output in /tmp/ibat-faults-ctest.log" >&2
fi
[[ -s $results/results.jsonl ]] || { echo "no scenario recorded results; see ctest output:" >&2; cat "$results/ctest.log" >&2; exit 1; }

python3 - "$results/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| scenario | requests sent = answered (once) | failures by reason | DLID 0 | latency p50 / p99 / max (ms) | SA queries | notes |")
print("|---|---|---|---|---|---|---|")
for s in rows:
    failures = ", ".join(f"{k} {v:,}" for k, v in sorted(s["failures"].items())) or "none"
    if s["abandoned"]:
        failures += f" ({s['abandoned']:,} abandoned by the client)"
    once = "✓" if s["answered_twice"] == 0 and s["unanswered"] == 0 else f"✗ twice {s['answered_twice']}, unanswered {s['unanswered']}"
    lat = s["latency_ms"]
    sa = "?" if s["sa_queries"] is None else f"{s['sa_queries']:,}"
    print(f"| {s['scenario']} | {s['sent']:,} = {s['answered'] + s['abandoned']:,} {once} | {failures} | {s['dlid0']} "
          f"| {lat['p50']:.2f} / {lat['p99']:.1f} / {lat['max']:.0f} | {sa} | {s['note']} |")
PY
exit $rc
