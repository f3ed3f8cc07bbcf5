#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# What one SA query costs the real OpenSM in the lab: OpenSM's CPU time (utime + stime of its
# process, in clock ticks) for GETS PathRecord GETs from one ibat-probe process, and for TABLES
# SGID-only PathRecord GetTables (one ibat-probe --table process each: the table and a NodeRecord
# table of the switches), on a 480-host fat tree (504 end ports) over the kernel MAD layer twin.
# Prints one JSON object. Needs the lab (ibsim, OpenSM) and ibat-probe (BIN_DIR, default build/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=${BIN_DIR:-$root/build/bin}
GETS=${GETS:-2000}
TABLES=${TABLES:-50}
L=$root/lab/ibat-lab
name=sa-cost-$$
tmp=$(mktemp -d)
trap '"$L" down --name "$name" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=0}
"$L" topology fattree --spines 4 --leaves 20 --hosts-per-leaf 24 --output "$tmp/tree.net"
"$L" up --name "$name" --topology "$tmp/tree.net" >/dev/null
sm=$("$L" status --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pids"]["sm_primary"])')
cpu() { awk '{print $14 + $15}' "/proc/$sm/stat"; }
dgid=$("$L" hosts --name "$name" --json | python3 -c 'import json,sys; print([h["gid"] for h in json.load(sys.stdin) if h["node"] == "h0400"][0])')
eval "$("$L" env --name "$name" --node h0100)"
sleep 12  # OpenSM's first sweeps after SUBNET UP
t0=$(cpu)
"$BIN_DIR/ibat-probe" --dgid "$dgid" --count "$GETS" --interval-ms 0 --json >"$tmp/gets" 2>/dev/null
t1=$(cpu)
for _ in $(seq 1 "$TABLES"); do "$BIN_DIR/ibat-probe" --table --json >"$tmp/table" 2>/dev/null; done
t2=$(cpu)
python3 - "$GETS" "$TABLES" "$((t1 - t0))" "$((t2 - t1))" "$(getconf CLK_TCK)" "$tmp/gets" "$tmp/table" <<'PY'
import json, sys
gets, tables, get_ticks, table_ticks, hz = map(int, sys.argv[1:6])
answered = sum(1 for line in open(sys.argv[6]) if '"dlid"' in line)
summary = [json.loads(l) for l in open(sys.argv[7]) if '"table"' in l][-1]["table"]
records = summary["records"]
get_us = get_ticks / hz / gets * 1e6
table_us = table_ticks / hz / tables * 1e6
print(json.dumps({"gets": gets, "gets_answered": answered, "opensm_us_per_get": round(get_us, 1),
                  "tables": tables, "records_per_table": records, "paths_per_table": summary["paths"],
                  "opensm_us_per_table": round(table_us, 1),
                  "opensm_us_per_table_record": round(table_us / records, 2),
                  "get_over_table_per_path": round(get_us / (table_us / records), 1)}))
PY
