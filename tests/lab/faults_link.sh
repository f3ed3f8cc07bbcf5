#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.link: a destination host's link goes down, then up (OpenSM traps 65/64 reach ibatd).
# While it is down, requests for it fail `unreachable`; once it is back they succeed. Load for
# every other destination runs throughout with no failure.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name flk)
victim=h0010
faults_setup "$name" --traps
victim_gid=$(host_field "$name" "$victim" gid)
others=$FAULTS_DIR/others
grep -v "^$victim_gid " "$DGIDS" >"$others"

out=$FAULTS_DIR/load.json
load_start "$out" --socket "$(sock A)" --socket "$(sock B)" --dgids "$others" --connections 4 --depth 8 \
  --rate 1500 --uncached-share 0.05 --timeout-ms 15000 --expect-exists --duration 600

# victim_status TAG: the outcome of one resolve of the victim ("ok" or a failure reason)
victim_status() {
  "$LOAD" --json --socket "$(sock "$1")" --dgid "$victim_gid" --count 1 --timeout-ms 3000 >"$FAULTS_DIR/v.json" 2>/dev/null || true
  jq_py "$FAULTS_DIR/v.json" '"ok" if s["ok"] == 1 else ",".join(s["failures"])'
}
# wait_victim WANT: until both daemons answer WANT for the victim; prints the ms it took
wait_victim() {
  local start; start=$(date +%s%3N)
  local deadline=$((SECONDS + 30))
  until [[ $(victim_status A) == "$1" && $(victim_status B) == "$1" ]]; do
    ((SECONDS < deadline)) || fail "daemons do not answer '$1' for $victim within 30 s (last: $(cat "$FAULTS_DIR/v.json"))"
    sleep 0.1
  done
  echo $(( $(date +%s%3N) - start ))
}

"$LAB" link --name "$name" down "$victim[1]" >/dev/null
down_ms=$(wait_victim unreachable)
pass "$victim answered unreachable by both daemons ${down_ms} ms after the unlink"
down_out=$FAULTS_DIR/down.json
# Plain requests (a FORCE_SA request asks the SA anyway, which answers no-record for a GID it lost).
load_run "$down_out" "requests for $victim while it is down" --socket "$(sock A)" --socket "$(sock B)" \
  --dgid "$victim_gid" --connections 2 --depth 8 --count 400 --timeout-ms 3000
expect_eq "failures for $victim while down" "$(jq_py "$down_out" 's["failures"]')" "{'unreachable': 400}"
rc=0
"$LOAD" --json --socket "$(sock A)" --dgid "$victim_gid" --count 10 --expect-exists >/dev/null 2>&1 || rc=$?
expect_eq "ibat-load --expect-exists exit for a destination that is down" "$rc" 1

"$LAB" link --name "$name" up "$victim[1]" >/dev/null
up_ms=$(wait_victim ok)
pass "$victim resolves on both daemons ${up_ms} ms after the relink"
up_out=$FAULTS_DIR/up.json
load_run "$up_out" "requests for $victim after it is back" --socket "$(sock A)" --socket "$(sock B)" \
  --dgid "$victim_gid" --connections 2 --depth 8 --count 400 --timeout-ms 15000 --uncached-share 0.5 --expect-exists

kill -INT "$LOAD_PID"
load_wait "$out" "load for the other destinations through the link down/up"
report "link down → up of $victim: load for the other 31" "$out"
report "… requests for $victim while down (must fail unreachable)" "$down_out" "unreachable on both daemons ${down_ms} ms after the unlink"
report "… requests for $victim after the relink" "$up_out" "resolving again ${up_ms} ms after the relink"
faults_finish
