#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.new_lids: `sm restart --new-lids` moves every HCA LID under load through two ibatd. No
# failure, no DLID 0, each request answered once; once a daemon noticed its own LID moved, no
# answer carries an old DLID (counted by ibat-load against `ibat-lab hosts --json`: must be 0);
# after revalidation every path served carries the new DLID. Reports SM up -> both daemons noticed,
# the old-DLID answers after that, and SM up -> all entries revalidated.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fnl)
# Background revalidation of the 32 entries takes 8 s here, as a large cache's would (100,000
# entries at the default 200/s take 500 s): what clients get meanwhile is what this checks.
write_config "$FAULTS_DIR/ibatd.toml" "retry_count = 12" "revalidate_per_s = 4"
faults_setup "$name"
old_lids=$(lids "$name")
stale=$FAULTS_DIR/dgids-old
write_dgids "$name" "$stale" --lids

out=$FAULTS_DIR/load.json
load_start "$out" "${LOAD_ARGS[@]}" --duration 600
sleep 1  # load before the fault
"$LAB" sm --name "$name" restart --new-lids >/dev/null 2>&1
sm_up_ms=$(date +%s%3N)  # `sm restart` returns once OpenSM logged SUBNET UP
new_lids=$(lids "$name")
[[ $new_lids != "$old_lids" ]] || fail "restart --new-lids kept the LIDs"
pass "every HCA LID moved"
expected=$FAULTS_DIR/dgids-new
write_dgids "$name" "$expected" --lids

# lid_changes TAG: the daemon's count of own-LID changes (`ibat stats`)
lid_changes() { cli "$1" stats --json >"$FAULTS_DIR/stats-$1.json" && jq_py "$FAULTS_DIR/stats-$1.json" 's["lid_changes"]'; }
deadline=$((SECONDS + 30))
until (( $(lid_changes A) >= 1 && $(lid_changes B) >= 1 )); do
  ((SECONDS < deadline)) || fail "the daemons did not notice their LIDs moved within 30 s"
  sleep 0.05
done
noticed_ms=$(( $(date +%s%3N) - sm_up_ms ))
pass "both daemons noticed their LID moved ${noticed_ms} ms after SUBNET UP"
# From then on a stale path waits for its fresh answer: no answer may carry an old DLID. This
# check load runs while the revalidation below is timed.
"$LOAD" --json --socket "$(sock A)" --socket "$(sock B)" --dgids "$expected" --connections 4 --depth 8 \
  --count 1000 --rate 1500 --timeout-ms 15000 --expect-exists >"$FAULTS_DIR/noticed.json" 2>"$FAULTS_DIR/noticed.json.err" &
check_pid=$!

# served_new_lids TAG: one cached answer per destination, each with the DLID `hosts` reports now
served_new_lids() {
  "$LOAD" --json --socket "$(sock "$1")" --dgids "$expected" --count "$(wc -l <"$expected")" \
    --depth 64 --timeout-ms 15000 --expect-exists >"$FAULTS_DIR/check-$1.json" 2>/dev/null
}
deadline=$((SECONDS + 60))
until served_new_lids A && served_new_lids B; do
  ((SECONDS < deadline)) || fail "old DLIDs still served 60 s after the SM came up: $(cat "$FAULTS_DIR"/check-*.json)"
  sleep 0.1
done
revalidated_ms=$(( $(date +%s%3N) - sm_up_ms ))
pass "both daemons serve only new DLIDs ${revalidated_ms} ms after SUBNET UP"
rc=0
wait "$check_pid" || rc=$?
old_dlids=$(jq_py "$FAULTS_DIR/noticed.json" 's["wrong_dlid"]')
expect_eq "answers with an old DLID once both daemons noticed the move" "$old_dlids" 0
load_verdict "$FAULTS_DIR/noticed.json" "load once the daemons noticed the move" "$rc"
kill -INT "$LOAD_PID"
load_wait "$out" "load through sm restart --new-lids"
load_run "$FAULTS_DIR/after.json" "load after revalidation: every answer carries the new DLID" \
  --socket "$(sock A)" --socket "$(sock B)" --dgids "$expected" --connections 4 --depth 8 \
  --duration 2 --rate 1500 --timeout-ms 15000 --expect-exists
# The DLID check is not vacuous: against the old LIDs every answer must now count as wrong.
rc=0
"$LOAD" --json --socket "$(sock A)" --dgids "$stale" --count 64 --expect-exists >"$FAULTS_DIR/stale.json" 2>/dev/null || rc=$?
expect_eq "ibat-load exit against the old LIDs" "$rc" 1
expect_eq "answers flagged with an old DLID" "$(jq_py "$FAULTS_DIR/stale.json" 's["wrong_dlid"]')" 64
report "sm restart --new-lids (all 32 LIDs move)" "$out" \
  "revalidated ${revalidated_ms} ms after SUBNET UP; old-DLID answers once both daemons noticed the move (${noticed_ms} ms): ${old_dlids}"
report "… from the daemons noticing the move, answers checked against the new LIDs" "$FAULTS_DIR/noticed.json" \
  "old-DLID answers: ${old_dlids}"
report "… then every answer checked against the new LIDs" "$FAULTS_DIR/after.json"
faults_finish
