#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.table: the subnet GetTable (the default prefetch) under faults, with load through two
# ibatd: OpenSM restarted five times back to back, so that the GetTable each SM change asks may
# still be in flight at the next restart, while daemon A's port drops 10 % of its MADs (RMPP
# segments of its table answers among them). Every request answered exactly once, no DLID 0, no
# failure; once the faults end each daemon holds a valid path to every HCA port, from a GetTable
# answered after its last SM change or, if the SA answered its GETs but not its table, by the GETs
# it then falls back to (logged), and counts no table it did not account for.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name ftab)
faults_setup "$name"
hcas=$(wc -l <"$DGIDS")

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 600
"$LAB" loss --name "$name" "h0001[1]" 10 >/dev/null
for round in $(seq 1 5); do "$LAB" sm --name "$name" restart >/dev/null; done
"$LAB" loss --name "$name" "h0001[1]" 0 >/dev/null
pass "OpenSM restarted 5 times with 10 % loss on ibatd A's port"

# settled_after_last_sm_change TAG: the daemon's log has, after its last SM change, a GetTable
# answer or the fall-back to GETs (the SA answered other queries but not the table)
settled_after_last_sm_change() {
  awk '/SM changed/ {seen = 0} / subnet paths: |GetTables off until the next SM|subnet GetTable failed/ {seen = 1}
       END {exit !seen}' "$FAULTS_DIR/$1.err"
}
for tag in A B; do
  deadline=$((SECONDS + 30))
  until settled_after_last_sm_change $tag &&
        [[ $(cli $tag paths --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(1 for p in j if p["state"] == "valid"))') -ge $hcas ]]; do
    ((SECONDS < deadline)) || fail "ibatd $tag: not every path valid 30 s after its last SM change: $(cli $tag stats --json)"
    sleep 0.2
  done
  how=$(awk '/SM changed/ {how = ""} / subnet paths: / {how = "a table"} /GetTables off until the next SM/ {how = "GETs (table lost)"}
             END {print how}' "$FAULTS_DIR/$tag.err")
  pass "ibatd $tag holds a valid path to all $hcas HCA ports after its last SM change, by ${how:-GETs}"
done
kill -INT "$LOAD_PID"
load_wait "$out" "load through 5 SM restarts and 10 % loss on A"

notes=()
for tag in A B; do
  s=$(cli $tag stats --json)
  python3 - "$s" "$hcas" "$tag" <<'PY' || fail "ibatd $tag table counters: $s"
import json, sys
s, hcas, tag = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
assert s["failures"]["total"] == 0, s["failures"]
assert s["entries"] >= hcas, s["entries"]
assert s["sa_tables_answered"] >= 1, "the first table"
# Each table sent was answered, failed for good, or replaced by a newer one (cancelled): never more.
assert s["sa_tables_answered"] + s["sa_tables_failed"] <= s["sa_tables"], s
print(f'ibatd {tag}: {s["sa_tables"]} tables sent, {s["sa_tables_answered"]} answered, '
      f'{s["sa_tables_failed"]} failed, {s["sa_tables"] - s["sa_tables_answered"] - s["sa_tables_failed"]} '
      f'replaced in flight; {s["sa_queries"]} GETs; {s["fabric"]["mad_timeouts"]} MAD timeouts')
PY
  notes+=("$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print("{}: tables {}/{} answered, {} replaced in flight".format(sys.argv[2], s["sa_tables_answered"], s["sa_tables"], s["sa_tables"] - s["sa_tables_answered"] - s["sa_tables_failed"]))' "$s" $tag)")
done
report "GetTables: OpenSM restart ×5 back to back, 10 % loss on A" "$out" "${notes[*]}"
faults_finish
