#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.rmpp_loss: exactly one RMPP segment of the subnet's GetTable answer is lost on the way to
# a fresh ibatd (the umad twin's "lose-rmpp-segment", given before the daemon's first MAD): the
# SA's kernel resends it after its ACK wait (2 s, mad_rmpp.c), the transfer completes, and the port
# still ends with every path of its subnet from GetTables (none given up, no fall-back to GETs).
# Then every destination resolves from the prefetched cache: 0 failures, 0 SA queries, each
# request answered exactly once; the twin counts the one injected loss.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name frl)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
write_config "$FAULTS_DIR/A.toml" "retry_count = 12"
DGIDS=$FAULTS_DIR/dgids
write_dgids "$name" "$DGIDS" --except h0001
control=$FAULTS_DIR/twin.fifo
mkfifo "$control"
exec 9<>"$control"  # holds the FIFO open: the line waits in it for the twin's start
echo "lose-rmpp-segment ibsim0 3" >&9
export IBAT_TWIN_CONTROL=$control IBAT_TWIN_STATS=$FAULTS_DIR/twin-stats.json
start_ibatd "$name" h0001 A
unset IBAT_TWIN_CONTROL IBAT_TWIN_STATS
deadline=$((SECONDS + 10))
until grep -qxF "lose-rmpp-segment ibsim0 3" "$control.done" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "the twin did not take the loss within 10 s"
  sleep 0.05
done
exec 9>&-
others=$(wc -l <"$DGIDS")

# stats_field EXPR: a Python expression over `ibat stats --json` (s)
stats_field() { cli A stats --json >"$FAULTS_DIR/stats.json" && jq_py "$FAULTS_DIR/stats.json" "$1"; }
deadline=$((SECONDS + 30))
until [[ $(stats_field 's["entries"]') -ge $others ]]; do
  ((SECONDS < deadline)) || fail "the prefetch did not fill the cache in 30 s: $(cat "$FAULTS_DIR/stats.json")"
  sleep 0.2
done
pass "the port holds a path to each of the $others other HCAs after the lost segment"
expect_eq "PathRecord GETs sent (every path came from GetTables)" "$(stats_field 's["sa_queries"]')" 0
expect_eq "GetTables that failed" "$(stats_field 's.get("sa_tables_failed", 0)')" 0
if grep -q "GetTables off" "$DAEMON_DIR/A.err"; then fail "GetTables were given up: $(grep "GetTables off" "$DAEMON_DIR/A.err")"; fi

load_run "$FAULTS_DIR/load.json" "every destination once from the prefetched cache" --socket "$(sock A)" \
  --dgids "$DGIDS" --count "$(wc -l <"$DGIDS")" --depth 16 --expect-exists --timeout-ms 15000
expect_eq "SA queries of that load" "$(jq_py "$FAULTS_DIR/load.json" 's["sa_queries"]')" 0
report "one RMPP segment of the GetTable answer lost" "$FAULTS_DIR/load.json"
stop_ibatd_cleanly A
expect_eq "segments the twin lost (injected)" "$(jq_py "$FAULTS_DIR/twin-stats.json" 's["injected_losses"]')" 1
[[ $(jq_py "$FAULTS_DIR/twin-stats.json" 's["reassembled"]') -ge 1 ]] || fail "no RMPP message reassembled: $(cat "$FAULTS_DIR/twin-stats.json")"
pass "the lost segment was resent and the answer reassembled"
