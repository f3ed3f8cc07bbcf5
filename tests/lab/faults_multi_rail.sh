#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.multi_rail: one ibatd serves a host with four HCAs on one rail-optimized fabric and a fifth
# HCA on a second fabric. Load from every port at once (each request names its port's source GID)
# through three OpenSM restarts and a fail-over to the standby SM on the rail fabric: every
# request answered exactly once, no DLID 0, no failure, on every port. The port on the other
# fabric sees no SM change, asks its SA nothing more than its own traffic asks, and serves its
# destinations throughout.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fmr)
other=$(lab_name fmr2)
topo=$FAULTS_DIR/rails-4x4.net
"$LAB" topology rails --hosts 4 --rails 4 --hosts-per-leaf 2 --spines 2 --output "$topo"
lab_up "$name" --topology "$topo" --sm-node g0000-mlx5_0 --standby-sm g0003-mlx5_3 >/dev/null
lab_up "$other" --topology "$TOPO/small-2sw4hca.net" >/dev/null
write_config "$FAULTS_DIR/A.toml" "retry_count = 12"
IBATD_ALSO="$other:Hca3" start_ibatd "$name" host:g0001 A

"$LAB" hosts --name "$name" --json >"$FAULTS_DIR/hosts.json"
"$LAB" hosts --name "$other" --json >"$FAULTS_DIR/hosts2.json"
# DGIDS: from each of g0001's four CAs to every HCA of its fabric but g0001's; OTHER: from Hca3 to
# the other fabric's HCAs
python3 - "$FAULTS_DIR/hosts.json" "$FAULTS_DIR/hosts2.json" "$FAULTS_DIR/dgids" "$FAULTS_DIR/other" <<'PY'
import json, sys
rails, small = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
mine = [h for h in rails if h.get("host") == "g0001"]
assert len(mine) == 4, mine
with open(sys.argv[3], "w") as out:
    for src in mine:
        for h in rails:
            if h.get("host") not in (None, "g0001") and h.get("gid"):
                print(h["gid"], f"from={src['gid']}", file=out)
src = next(h for h in small if h["node"] == "Hca3")
with open(sys.argv[4], "w") as out:
    for h in small:
        if h["node"].startswith("Hca") and h["node"] != "Hca3":
            print(h["gid"], f"from={src['gid']}", file=out)
PY
[[ $(wc -l <"$FAULTS_DIR/dgids") -eq 48 ]] || fail "expected 4 x 12 destinations: $(wc -l <"$FAULTS_DIR/dgids")"
# ports_where CONDITION: how many ports of `ibat ports --json` (kept in ports-now.json) meet it
ports_where() {
  cli A ports --json >"$FAULTS_DIR/ports-now.json" || return 1
  python3 -c 'import json,sys; print(sum(bool(eval(sys.argv[2])) for p in json.load(open(sys.argv[1]))))' \
    "$FAULTS_DIR/ports-now.json" "$1"
}
deadline=$((SECONDS + 30))
until [[ $(ports_where 'p["state"] == "active" and p["sm_lid"] > 0') == 5 ]]; do
  ((SECONDS < deadline)) || fail "five active ports not seen in 30 s: $(cat "$FAULTS_DIR/ports-now.json")"
  sleep 0.2
done
cp "$FAULTS_DIR/ports-now.json" "$FAULTS_DIR/ports.json"
pass "ibatd A serves five active ports (four rails, one on the other fabric)"
for f in dgids other; do
  load_run "$FAULTS_DIR/warm-$f.json" "warm-up: $f, every destination once from its port" \
    --socket "$(sock A)" --dgids "$FAULTS_DIR/$f" --count "$(wc -l <"$FAULTS_DIR/$f")" --depth 16 --expect-exists --timeout-ms 15000
done
port_field() {  # port_field PORT FIELD: one field of `ibat ports --json`
  python3 -c 'import json,sys; print(next(p[sys.argv[3]] for p in json.load(open(sys.argv[1])) if p["name"] == sys.argv[2]))' \
    "$FAULTS_DIR/ports-now.json" "$1" "$2"
}
other_port=$(python3 -c 'import json,sys; print(next(p["name"] for p in json.load(open(sys.argv[1])) if not p["name"].startswith("mlx5_")))' "$FAULTS_DIR/ports.json")
cli A ports --json >"$FAULTS_DIR/ports-now.json"
other_queries=$(port_field "$other_port" sa_queries)
RSS_A=$(rss_kb A)

out=$FAULTS_DIR/load.json
other_out=$FAULTS_DIR/load-other.json
load_start "$out" --socket "$(sock A)" --dgids "$FAULTS_DIR/dgids" --connections 4 --depth 8 --rate 1500 \
  --uncached-share 0.05 --timeout-ms 15000 --expect-exists --duration 600
rails_pid=$LOAD_PID
load_start "$other_out" --socket "$(sock A)" --dgids "$FAULTS_DIR/other" --connections 1 --depth 4 --rate 200 \
  --timeout-ms 15000 --expect-exists --duration 600
other_pid=$LOAD_PID
sleep 1  # load before the faults
for round in 1 2 3; do "$LAB" sm --name "$name" restart >/dev/null; done
"$LAB" sm --name "$name" failover >/dev/null
pass "rail fabric: OpenSM restarted 3 times, then failed over to the standby"
# every rail port notices an SM change after the fail-over; the other fabric's port none
deadline=$((SECONDS + 30))
until [[ $(ports_where 'p["name"].startswith("mlx5_") and p["sm_changes"] >= 1') == 4 ]]; do
  ((SECONDS < deadline)) || fail "not every rail port saw an SM change in 30 s: $(cat "$FAULTS_DIR/ports-now.json")"
  sleep 0.2
done
pass "every rail port noticed the SM changes"
sleep 2  # load after the standby is master
kill -INT "$rails_pid"
LOAD_PID=$rails_pid load_wait "$out" "load from four rail ports through 3 SM restarts and a fail-over"
kill -INT "$other_pid"
LOAD_PID=$other_pid load_wait "$other_out" "load from the other fabric's port meanwhile"
cli A ports --json >"$FAULTS_DIR/ports-now.json"
expect_eq "SM changes on the other fabric's port" "$(port_field "$other_port" sm_changes)" 0
expect_eq "SA queries of the other fabric's port beyond its uncached-free load" \
  "$(( $(port_field "$other_port" sa_queries) - other_queries ))" 0
cli A health --json >"$FAULTS_DIR/health.json" || true
expect_eq "the other fabric's port is healthy" \
  "$(jq_py "$FAULTS_DIR/health.json" '[p["healthy"] for p in s["ports"] if p["port"] == "'"$other_port"'"][0]')" True
report "multi-rail host: 3 SM restarts + fail-over on the rail fabric, load from every port" "$out" \
  "the port on a second fabric: 0 SM changes, 0 extra SA queries, 0 failures"
expect_rss_stable A "$RSS_A"
stop_ibatd_cleanly A
