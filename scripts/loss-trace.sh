#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# loss-trace.sh [OUT.tsv]: the time series of faults.loss's fabric (two ibatd on fattree-32, the
# fault suite's config and load: 1,500 requests/s, 20 % FORCE_SA) through 6 s at 10 % MAD loss on
# daemon A's port, 6 s at 50 %, then 6 s at 10 % again (30 s deadline, so that nothing fails and
# the wait shows). Every ~0.5 s a row of A's `ibat stats`: time since the start, sa_window,
# sa_queries, sa_timeouts, sa_retries, pending, misses, sa_tables, sa_tables_answered,
# sa_tables_failed, sa_probes, and the fabric's mad_timeouts, mad_retries, sa_srtt_us and
# sa_mad_timer_floor_us (what the next attempt waits at least); `#` rows
# mark the phases. Binaries from
# IBAT_BIN_DIR (default build-test/bin; ibatd, ibat, ibat-load). docs/reliability.md quotes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export IBAT_LAB=${IBAT_LAB:-$root/lab/ibat-lab} IBAT_TOPOLOGY_DIR=${IBAT_TOPOLOGY_DIR:-$root/lab/topologies}
export IBAT_BIN_DIR=${IBAT_BIN_DIR:-$root/build-test/bin}
OUT=$(realpath -m "${1:-loss-trace.tsv}")
source "$root/tests/lab/lab_lib.sh"
source "$root/tests/lab/faults_lib.sh"
name=$(lab_name ltrace)
faults_setup "$name"
args=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 4 --depth 8 --rate 1500
      --uncached-share 0.2 --duration 6)
start=$(date +%s.%N)
since() { python3 -c "import time; print('%.2f' % (time.time() - $start))"; }
cols=(sa_window sa_queries sa_timeouts sa_retries pending misses sa_tables sa_tables_answered sa_tables_failed sa_probes
      fabric.mad_timeouts fabric.mad_retries fabric.sa_srtt_us fabric.sa_mad_timer_floor_us)
(IFS=$'\t'; echo "t_s	${cols[*]}") >"$OUT"
( while :; do
    t=$(since)
    cli A stats --json 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
def get(key):
    v = s
    for part in key.split("."): v = v.get(part, "") if isinstance(v, dict) else ""
    return v
print(sys.argv[1], *[get(k) for k in sys.argv[2:]], sep="\t")' "$t" "${cols[@]}" >>"$OUT"
    sleep 0.25
  done ) &
poller=$!
phase() { printf '# %s\t%s\n' "$(since)" "$1" >>"$OUT"; }
"$LAB" loss --name "$name" 'h0001[1]' 10 >/dev/null; phase "10 % loss"
load_run "$FAULTS_DIR/loss10.json" "6 s at 10 % MAD loss" "${args[@]}" --timeout-ms 15000 --expect-exists
"$LAB" loss --name "$name" 'h0001[1]' 50 >/dev/null; phase "50 % loss"
load_run "$FAULTS_DIR/loss50.json" "6 s at 50 % MAD loss" "${args[@]}" --timeout-ms 2000 --expect-exists --allow-timeouts
"$LAB" loss --name "$name" 'h0001[1]' 10 >/dev/null; phase "10 % loss again"
load_run "$FAULTS_DIR/loss10-again.json" "6 s at 10 % MAD loss again (30 s deadline)" "${args[@]}" --timeout-ms 30000 --expect-exists
phase "end"
kill "$poller"
"$LAB" loss --name "$name" 'h0001[1]' 0 >/dev/null
faults_finish
echo "loss-trace: $OUT"
