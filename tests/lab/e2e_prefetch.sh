#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.prefetch: a fresh ibatd with the default config on a generated 480-host tree (the real
# OpenSM through the kernel MAD twin's RMPP) learns its subnet's size from the switches'
# SwitchInfoRecords, then holds a path to every host of the subnet from one PathRecord GetTable,
# having sent no PathRecord GET; a sample of them equals saquery's answers and
# each first resolve is a cache hit, through the CLI and through the kernel's local SA (the kernel
# twin asks as IPoIB does). After `sm restart --new-lids` the 8 paths used within the minute go
# by GET ahead of the table, and one more GetTable revalidates every path (new DLIDs, counted).
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2epf)
"$LAB" topology fattree --spines 4 --leaves 20 --hosts-per-leaf 24 --output "$E2E_DIR/ft480.net"
lab_up "$name" --topology "$E2E_DIR/ft480.net" >/dev/null
hosts=$(hosts_file "$name")
src=h0003
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
write_config "$E2E_DIR/d.toml"
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
start_ibatd "$name" $src d

# stats_field TAG EXPR: EXPR over ibat stats --json (j)
stats_field() { jq_py "$(cli "$1" stats --json)" "$2"; }
# wait_tables TAG N: until N subnet GetTables have been answered
wait_tables() {
  local deadline=$((SECONDS + 30))
  until (($(stats_field "$1" 'j["sa_tables_answered"]') >= $2)); do
    ((SECONDS < deadline)) || fail "no subnet GetTable answered ($2 wanted) in 30 s: $(cli "$1" stats --json); $(tail -5 "$DAEMON_DIR/$1.err")"
    sleep 0.1
  done
}

started=$SECONDS
wait_tables d 1
pass "the subnet's paths arrived $((SECONDS - started)) s after the socket opened"
all_hosts=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$hosts")
s=$(cli d stats --json)
expect_eq "cache entries: every host of the subnet (itself included)" "$(jq_py "$s" 'j["entries"]')" "$all_hosts"
expect_eq "PathRecord GETs sent" "$(jq_py "$s" 'j["sa_queries"]')" 0
# OpenSM's LinearFDBTop: the top LID it assigned, every host and switch (24 of them) below it
lids=$(sed -n 's/.*subnet size: LIDs up to \([0-9]*\) .*/\1/p' "$DAEMON_DIR/d.err" | head -1)
expect_eq "the subnet's size, asked before its table (the switches' LinearFDBTop)" "${lids:-none}" $((all_hosts + 24))
expect_eq "subnet GetTables sent" "$(jq_py "$s" 'j["sa_tables"]')" 1
expect_eq "switch ports left out of the table" "$(jq_py "$s" 'j["fabric"]["sa_table_records"] - j["table_paths"] - 24 >= 0')" True
# The table, answered at its first attempt, timed OpenSM's work per record for the next table's
# MAD timer (fabric::TableTimer); the GETs' round trip (the gate's probe) is measured apart.
per_record=$(jq_py "$s" 'j["fabric"]["sa_table_ns_per_record"]')
srtt=$(jq_py "$s" 'j["fabric"]["sa_srtt_us"]')
((per_record > 0 && srtt > 0)) || fail "the table and the GETs left no measurement: $s"
pass "measured: the SA's GET round trip $srtt us, its time per record of the table $per_record ns"
# What each next attempt waits at least: twice the round trip (more only after a timeout), and for
# the next table also its records at the measured time each.
mad_floor=$(jq_py "$s" 'j["fabric"]["sa_mad_timer_floor_us"]')
table_floor=$(jq_py "$s" 'j["fabric"]["sa_table_timer_floor_us"]')
((mad_floor >= 2 * srtt)) || fail "the MAD timer floor $mad_floor us is below twice the round trip $srtt us: $s"
((table_floor > mad_floor)) || fail "the table's timer floor $table_floor us is not above the MAD floor $mad_floor us: $s"
pass "timer floors now: MADs $mad_floor us, the next table $table_floor us"

# A sample across leaves: each first resolve a hit, equal to saquery's answer.
sgid=$(host "$name" $src gid)
for dest in h0001 h0030 h0241 h0479; do
  dgid=$(host "$name" $dest gid)
  out=$(cli d resolve --dgid "$dgid" --json) || fail "resolve $dest: exit $?"
  want=$(saquery_path "$name" $src "$sgid" "$dgid")
  python3 - "$out" "$want" <<'PY' || fail "$dest: ibatd and saquery differ"
import json, sys
got, want = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert got["state"] == "valid", got
diff = {k: (got[k], v) for k, v in want.items() if got[k] != v}
assert not diff, f"(ibatd, saquery) differ: {diff}"
PY
  pass "$dest: DLID $(jq_py "$out" 'j["dlid"]') as saquery, from the table"
done
s=$(cli d stats --json)
expect_eq "the sample: cache hits" "$(jq_py "$s" 'j["cache_hits"]')" 4
expect_eq "the sample: PathRecord GETs" "$(jq_py "$s" 'j["sa_queries"]')" 0

# The kernel's first path query for any host (IPoIB's) is a hit too.
kernel_dgids=()
for dest in h0002 h0100 h0333 h0478; do kernel_dgids+=("$(host "$name" $dest gid)"); done
"$TWIN" --socket "$E2E_DIR/d.lsa" --sgid "$sgid" --caller ipoib "${kernel_dgids[@]}" >"$E2E_DIR/kernel.jsonl" ||
  fail "kernel twin failed: exit $?"
expect_eq "kernel twin: paths" "$(grep -c '"outcome": *"path"' "$E2E_DIR/kernel.jsonl")" 4
s=$(cli d stats --json)
expect_eq "kernel twin: cache hits" "$(jq_py "$s" 'j["cache_hits"]')" 8
expect_eq "kernel twin: PathRecord GETs" "$(jq_py "$s" 'j["sa_queries"]')" 0

# SM restart with new LIDs: one GetTable revalidates everything. The daemon asks one when it sees
# its own LID move and again when it sees the SM change (an answer from between the two may be
# the new SM's already, or lost to its first sweep), so 1 or 2 more are answered.
old_dlid=$(jq_py "$(cli d resolve --dgid "$(host "$name" h0241 gid)" --json)" 'j["dlid"]')
"$LAB" sm restart --name "$name" --new-lids >/dev/null
deadline=$((SECONDS + 20))
until s=$(cli d stats --json) && (($(jq_py "$s" 'j["sm_changes"]') >= 1 && $(jq_py "$s" 'j["pending"] + j["inflight"]') == 0)) &&
      [[ $(jq_py "$(cli d paths --json)" 'sum(1 for p in j if p["state"] != "valid")') == 0 ]]; do
  ((SECONDS < deadline)) || fail "stale entries left 20 s after the restart: $(cli d stats --json)"
  sleep 0.2
done
new=$(cli d resolve --dgid "$(host "$name" h0241 gid)" --cache-only --json)
[[ $(jq_py "$new" 'j["dlid"]') != "$old_dlid" ]] || fail "h0241 kept DLID $old_dlid across the new LIDs"
s=$(cli d stats --json)
expect_eq "after the restart: 1 or 2 more subnet GetTables answered" "$(jq_py "$s" 'j["sa_tables_answered"] in (2, 3)')" True
expect_eq "after the restart: every entry refreshed by each table" \
  "$(jq_py "$s" 'j["table_paths"] == j["sa_tables_answered"] * j["entries"]')" True
expect_eq "after the restart: entries" "$(jq_py "$s" 'j["entries"]')" "$all_hosts"
# The 8 paths in use (4 through the CLI, 4 through the kernel twin) carry the old LIDs: they are
# asked by GET once the daemon sees its LID move, while OpenSM is still starting, so the table
# (held for them at most 2 s) may answer some first; a requeue after a second move may ask one
# again. No other path goes by GET: at most 2 x 8.
gets=$(jq_py "$s" 'j["sa_queries"]')
((gets <= 16)) || fail "after the restart: $gets PathRecord GETs, want at most 16 (the 8 paths in use): $s"
pass "after the restart: $gets GETs, for the 8 paths in use only"
expect_eq "after the restart: failures" "$(jq_py "$s" 'j["failures"]["total"]')" 0
pass "h0241 moved from DLID $old_dlid to $(jq_py "$new" 'j["dlid"]'), revalidated by GetTable"
