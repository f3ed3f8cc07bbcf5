#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.cli: the ibat CLI against a real ibatd on the lab: resolve by DGID, DLID and IP (after
# `neigh add`) with --json fields equal to saquery's; paths, stats (Prometheus text checked by
# promtool), flush with its count, neigh list/del; exit codes for an unknown GID (no-record), a
# --cache-only miss, an IP without neighbour and a down local port (unreachable), no daemon (connect);
# `health` of a healthy, a SIGSTOPped (exit 19 at --timeout) and an absent ibatd; where a path came
# from (the prefetched table, then a GET) and its cache key; `resolve --verify` against OpenSM
# (agreeing); `paths --dgid`; `config` before and after a SIGHUP reload; a failure under --json.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2ecli)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0003
sgid=$(host "$name" $src gid)
start_ibatd "$name" $src d
wait_resolving d "$(host "$name" h0010 gid)"

# expect_path WHAT JSON DGID DEST_NODE: the CLI's JSON object equals saquery's path to DEST_NODE
expect_path() {
  local what=$1 json=$2 dgid=$3 dest=$4 want
  want=$(saquery_path "$name" $src "$sgid" "$dgid")
  python3 - "$json" "$want" "$dgid" "$sgid" <<'PY' || fail "$what: CLI and saquery differ"
import json, sys
got, want, dgid, sgid = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
need = {"dgid", "sgid", "dlid", "slid", "sl", "mtu", "rate", "pkt_life", "pkey", "state", "age_ms"}
assert need <= got.keys(), f"missing fields {need - got.keys()} in {got}"
assert got["dgid"] == dgid and got["sgid"] == sgid, got
assert got["state"] in ("valid", "stale", "provisional"), got
diff = {k: (got[k], v) for k, v in want.items() if got[k] != v}
assert not diff, f"(CLI, saquery) differ: {diff}"
PY
  pass "$what: $(jq_py "$json" '{k: j[k] for k in ("dlid", "sl", "mtu", "rate")}') as saquery ($dest)"
}

# by DGID, for hosts on the same leaf, another leaf, and a 1x link (different rate)
for dest in h0001 h0010 h0021 h0004; do
  dgid=$(host "$name" $dest gid)
  out=$(cli d resolve --dgid "$dgid" --json) || fail "resolve --dgid $dgid: exit $?"
  expect_path "resolve --dgid ($dest)" "$out" "$dgid" $dest
done

# by DLID
dest=h0025 dgid=$(host "$name" h0025 gid) dlid=$(host "$name" h0025 lid)
out=$(cli d resolve --dlid "$dlid" --json) || fail "resolve --dlid $dlid: exit $?"
expect_path "resolve --dlid $dlid" "$out" "$dgid" $dest

# by IP, after neigh add with the host's IPoIB hardware address (QPN 0x48 + GID)
dest=h0030 dgid=$(host "$name" h0030 gid)
hw=$(python3 -c 'import ipaddress,sys; b=bytes([0,0,0,0x48])+ipaddress.IPv6Address(sys.argv[1]).packed; print(":".join(f"{x:02x}" for x in b))' "$dgid")
cli d neigh add 10.1.0.30 "$hw" || fail "neigh add: exit $?"
out=$(cli d resolve --ip 10.1.0.30 --json) || fail "resolve --ip 10.1.0.30: exit $?"
expect_path "resolve --ip 10.1.0.30" "$out" "$dgid" $dest
neigh=$(cli d neigh list --json)
expect_eq "neigh list --json entry" "$(jq_py "$neigh" '[(n["ip"], n["gid"]) for n in j]')" "[('10.1.0.30', '$dgid')]"
expect_contains "neigh list" "$(cli d neigh list)" "10.1.0.30"

# paths: every destination resolved above is listed with its DLID
paths=$(cli d paths --json)
# The default prefetch filled the cache with a path to every HCA port of the subnet.
all=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$(hosts_file "$name")")
expect_eq "paths --json entries (every HCA port, prefetched)" "$(jq_py "$paths" 'len(j)')" "$all"
expect_eq "paths --json DLID of h0025" "$(jq_py "$paths" "[p['dlid'] for p in j if p['dgid'] == '$(host "$name" h0025 gid)']")" "[$dlid]"
expect_contains "paths (table)" "$(cli d paths)" "$(host "$name" h0021 gid)"

# paths --dgid: the one path to h0025
expect_eq "paths --dgid (h0025): its DLID only" "$(jq_py "$(cli d paths --dgid "$(host "$name" h0025 gid)" --json)" '[p["dlid"] for p in j]')" "[$dlid]"
expect_eq "paths --dgid of a GID not cached" "$(cli d paths --dgid fe80::10:dead --json)" "[]"

# origin: h0021's path came with the prefetched table, under the default key
dgid=$(host "$name" h0021 gid)
out=$(cli d resolve --dgid "$dgid" --json) || fail "resolve --dgid $dgid: exit $?"
expect_eq "resolve --json origin of a prefetched path" \
  "$(jq_py "$out" 'j["origin"]["source"], j["origin"]["key"] == {"sgid": j["sgid"], "dgid": j["dgid"], "pkey": "0xffff"}')" "('sa-table', True)"
expect_eq "paths --json origin of h0021" "$(jq_py "$(cli d paths --dgid "$dgid" --json)" 'j[0]["origin"]')" "sa-table"
expect_contains "resolve (text) origin" "$(cli d resolve --dgid "$dgid")" "origin:     sa-table: the subnet's PathRecord GetTable"
expect_contains "resolve (text) fields" "$(cli d resolve --dgid "$dgid")" "reversible: "

# --verify against the real SA: the cached path agrees with OpenSM's fresh answer, field by field
out=$(cli d resolve --dgid "$dgid" --verify --json) || fail "resolve --verify: exit $?: $out"
expect_eq "resolve --verify --json: agree" "$(jq_py "$out" 'j["agree"], j["differ"], j["cached"]["origin"]["source"], j["sa"]["origin"]["source"]')" \
  "(True, [], 'sa-table', 'sa-get')"
expect_eq "resolve --verify --json: both DLIDs" "$(jq_py "$out" 'j["cached"]["dlid"] == j["sa"]["dlid"] > 0')" "True"
expect_exit 0 "resolve --verify (text)" -- cli d resolve --dgid "$dgid" --verify
expect_contains "resolve --verify (text)" "$(cli d resolve --dgid "$dgid" --verify)" "agree:  yes"
# the SA's answer is cached now: a single GET
expect_eq "origin after --verify" "$(jq_py "$(cli d resolve --dgid "$dgid" --json)" 'j["origin"]["source"]')" "sa-get"

# config: the running configuration, and after a SIGHUP reload the reloaded value
cfg=$(cli d config --json) || fail "config --json: exit $?"
expect_eq "config --json: log_level, and path_ttl_s and ports are there" \
  "$(jq_py "$cfg" '(lambda d: (d["log_level"], "policy.path_ttl_s" in d, d["fabric.ports"][1]))({i["key"]: (i["value"], i["reloadable"]) for i in j})')" \
  "(('\"info\"', True), True, False)"
expect_contains "config (TOML)" "$(cli d config)" "[policy]"
sed -i 's/^log_level = "info"$/log_level = "warn"/' "$DAEMON_DIR/d.toml"
kill -HUP "${DAEMON_PID[d]}"
deadline=$((SECONDS + 10))
until [[ $(jq_py "$(cli d config --json)" '[i["value"] for i in j if i["key"] == "log_level"][0]') == '"warn"' ]]; do
  ((SECONDS < deadline)) || fail "config: log_level not \"warn\" 10 s after SIGHUP"
  sleep 0.2
done
pass "config after SIGHUP: log_level = \"warn\""
expect_contains "config (TOML) after SIGHUP" "$(cli d config)" 'log_level = "warn"'

# stats
stats=$(cli d stats --json)
python3 - "$stats" "$all" <<'PY' || fail "stats --json: $stats"
import json, sys
s = json.loads(sys.argv[1])
need = {"resolves", "cache_hits", "stale_hits", "provisional_hits", "sa_queries", "sa_timeouts",
        "coalesced", "failures", "pending", "entries", "sm_changes"}
assert need <= s.keys(), f"missing {need - s.keys()}"
all = int(sys.argv[2])
assert s["resolves"] >= 7 and s["cache_hits"] >= 6 and s["entries"] == all and s["pending"] == 0, s
assert s["sa_tables_answered"] == 1 and s["table_paths"] == all, s
PY
pass "stats --json: $(jq_py "$stats" '{k: j[k] for k in ("resolves", "cache_hits", "sa_queries", "entries")}')"
# ports and health: the one port of this host, active with its SM
ports=$(cli d ports --json)
device=$(jq_py "$ports" 'j[0]["device"]')
port=$(jq_py "$ports" 'j[0]["port"]')
expect_eq "ports --json: one active port with every entry" \
  "$(jq_py "$ports" 'len(j), j[0]["state"], j[0]["entries"] == '"$all"', j[0]["sm_lid"] > 0, j[0]["default"]')" "(1, 'active', True, True, True)"
expect_contains "ports (table)" "$(cli d ports)" "$device:$port"
expect_exit 0 "health" -- cli d health
expect_contains "health says why it is fine" "$(cli d health)" "ok: 1 port active"
# a wedged ibatd (SIGSTOPped: its socket still accepts, nothing answers): health ends at its
# --timeout with exit 19 and one line, and passes again once ibatd runs on
kill -STOP "${DAEMON_PID[d]}"
expect_exit 19 "health of a stopped ibatd" -- cli d health --timeout 1
expect_eq "health of a stopped ibatd: one line" "$LAST_ERR" "ibat health: ibatd did not answer within 1 s (socket $(sock d))"
kill -CONT "${DAEMON_PID[d]}"
expect_exit 0 "health once the stopped ibatd runs again" -- cli d health
expect_eq "paths --port: this port's paths" "$(jq_py "$(cli d paths --port "$device:$port" --json)" 'len(j)')" "$all"
expect_exit 2 "paths --port of a port ibatd does not serve" -- cli d paths --port nosuch:1
expect_contains "unknown --port message" "$LAST_ERR" "ibatd serves no such port (it serves $device:$port)"

prom=$(cli d stats --prometheus)
labels="device=\"$device\",port=\"$port\""
expect_contains "stats --prometheus" "$prom" "ibat_cache_entries{$labels} $all"
expect_contains "stats --prometheus" "$prom" "ibat_sa_tables_answered_total{$labels} 1"
lint=$(promtool check metrics <<<"$prom" 2>&1) || fail "promtool check metrics: $lint"
expect_eq "promtool check metrics findings" "$lint" ""

# a cached resolve is a cache hit, not an SA query
sa_before=$(jq_py "$stats" 'j["sa_queries"]')
cli d resolve --dgid "$(host "$name" h0010 gid)" >/dev/null
expect_eq "SA queries after a cached resolve" "$(jq_py "$(cli d stats --json)" 'j["sa_queries"]')" "$sa_before"

# flush one destination, then everything
expect_eq "flush --dgid output" "$(cli d flush --dgid "$(host "$name" h0010 gid)")" \
  "flushed 1 cached path to $(host "$name" h0010 gid)"
expect_eq "entries after flush --dgid" "$(jq_py "$(cli d stats --json)" 'j["entries"]')" $((all - 1))
expect_exit 12 "cache-only resolve of a flushed destination (no-record)" -- \
  cli d resolve --dgid "$(host "$name" h0010 gid)" --cache-only
expect_contains "cache-only miss message" "$LAST_ERR" "no usable path in ibatd's cache"
expect_eq "flush output" "$(cli d flush)" "flushed $((all - 1)) cached paths"
expect_eq "entries after flush" "$(jq_py "$(cli d stats --json)" 'j["entries"]')" 0

# errors and their exit codes
unknown="fe80::10:dead"
expect_exit 12 "resolve of an unknown GID (no-record)" -- cli d resolve --dgid "$unknown"
expect_contains "unknown GID message" "$LAST_ERR" "has no path"
# under --json the failure is a JSON object on stdout too
rc=0
out=$(cli d resolve --dgid "$unknown" --json 2>/dev/null) || rc=$?
expect_eq "resolve --json of an unknown GID: exit and error object" "$rc $(jq_py "$out" 'j["error"]["code"]')" "12 12"
expect_exit 11 "resolve of an IP without neighbour entry (unreachable)" -- cli d resolve --ip 10.9.9.9 --timeout 300
expect_exit 11 "neigh del of an IP without entry" -- cli d neigh del 10.9.9.9
expect_contains "neigh del message" "$LAST_ERR" "no neighbour entry"
cli d neigh del 10.1.0.30 || fail "neigh del 10.1.0.30: exit $?"
expect_exit 2 "resolve without a target (usage)" -- cli d resolve
expect_exit 3 "no daemon at the socket (connect)" -- "$IBAT_CLI" --socket "$E2E_DIR/none.sock" stats
expect_exit 19 "health with no daemon at the socket" -- "$IBAT_CLI" --socket "$E2E_DIR/none.sock" health
expect_eq "health with no daemon: one line" "$(wc -l <<<"$LAST_ERR")" 1
expect_contains "health with no daemon" "$LAST_ERR" "ibatd is not running (socket $E2E_DIR/none.sock: No such file or directory)"

# the local port goes down: a resolve that cannot be sent is unreachable (11), not an SA timeout
"$LAB" link --name "$name" down "$src[1]" >/dev/null
expect_exit 11 "resolve while the local port is down (unreachable)" -- \
  cli d resolve --dgid "$(host "$name" h0021 gid)" --timeout 3000
expect_contains "down port message" "$LAST_ERR" "unreachable"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
