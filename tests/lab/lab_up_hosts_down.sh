#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.up_hosts_down: fattree-32 comes up, `hosts` lists its 32 HCAs with unique LIDs and
# fe80:: GIDs built from the port GUIDs, and `down` stops every process and removes the folder.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name up)

LAB_FABRICS+=("$name")  # lab_up in $(...) registers it in a subshell only
out=$(lab_up "$name" --topology "$TOPO/fattree-32.net")
expect_contains "up output" "$out" "SUBNET UP"

"$LAB" hosts --name "$name" --json | python3 -c '
import ipaddress, json, sys
hosts = json.load(sys.stdin)
assert len(hosts) == 32, f"{len(hosts)} hosts"
assert sorted(h["node"] for h in hosts) == [f"h{i:04d}" for i in range(32)], "node ids"
lids = [h["lid"] for h in hosts]
assert len(set(lids)) == 32 and all(0 < l < 0xC000 for l in lids), f"LIDs {lids}"
for h in hosts:
    gid = ipaddress.IPv6Address(h["gid"])
    assert h["gid"].startswith("fe80::"), h
    assert int(gid) == (0xFE80 << 112) | int(h["guid"], 16), h
    assert h["port"] == 1, h
'
pass "hosts --json: 32 HCAs, unique LIDs, fe80:: GIDs from port GUIDs"

table_lines=$("$LAB" hosts --name "$name" | wc -l)
expect_eq "hosts table lines (header + 32)" "$table_lines" 33

expect_eq "SM state seen from h0007" "$(sminfo_state "$name" h0007)" SMINFO_MASTER

dir=${IBAT_LAB_DIR:-/tmp/ibat-lab}/$name
pids=$(python3 -c 'import json,sys; print(" ".join(str(p) for p in json.load(open(sys.argv[1]))["pids"].values() if p))' "$dir/state.json")
"$LAB" down --name "$name" >/dev/null
[[ ! -e "$dir" ]] || fail "runtime folder $dir still exists after down"
for pid in $pids; do
  if [[ -e /proc/$pid ]] && [[ $(awk '{print $3}' /proc/$pid/stat) != Z ]]; then
    fail "pid $pid still runs after down"
  fi
done
pass "down stopped pids $pids and removed $dir"
expect_exit 3 "hosts after down" -- "$LAB" hosts --name "$name"
