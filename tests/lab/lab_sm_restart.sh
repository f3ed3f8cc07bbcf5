#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.sm_restart: a plain OpenSM restart keeps every LID (guid2lid cache); restart --new-lids
# gives every HCA a LID it did not have, the SA knows the new LIDs, and they survive a restart.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name smr)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null

before=$(lids "$name")
"$LAB" sm --name "$name" restart >/dev/null
[[ $(lids "$name") == "$before" ]] || fail "LIDs changed by a plain restart"
pass "LIDs kept by sm restart"
expect_eq "SM state after restart" "$(sminfo_state "$name" h0003)" SMINFO_MASTER
# status --json: the OpenSM's pid and role, and the restart's timing
status=$("$LAB" status --name "$name" --json)
python3 - "$status" <<'PY' || fail "status --json after sm restart: $status"
import json, sys
s = json.loads(sys.argv[1])
sm = s["sm"]["primary"]
assert sm["running"] and isinstance(sm["pid"], int) and sm["state"] == "MASTER", sm
assert s["pids"]["ibsim"] > 0 and s["timings"]["sm_restart_s"] > 0, s
PY
pass "status --json: the OpenSM's pid, MASTER, sm_restart_s"
text=$("$LAB" status --name "$name")
expect_contains "status (text)" "$text" "primary on "
expect_contains "status (text)" "$text" ", MASTER"

"$LAB" sm --name "$name" restart --new-lids >/dev/null 2>&1
after=$(lids "$name")
python3 - "$before" "$after" <<'PY'
import sys
old = dict(l.split("=") for l in sys.argv[1].split())
new = dict(l.split("=") for l in sys.argv[2].split())
assert old.keys() == new.keys() and len(new) == 32, (old.keys(), new.keys())
same = [n for n in old if old[n] == new[n]]
assert not same, f"LID unchanged for {same}"
assert len(set(new.values())) == 32, "new LIDs not unique"
PY
pass "restart --new-lids changed all 32 LIDs"

lid31=$(host_field "$name" h0031 lid)
sa_desc=$("$LAB" run --name "$name" --node h0002 -- saquery "$lid31" | sed -n 's/^[[:space:]]*NodeDescription\.*//p')
expect_eq "SA NodeRecord at h0031's new LID" "$sa_desc" h0031
expect_eq "local PortInfo LID of h0031" \
  "$("$LAB" run --name "$name" --node h0031 -- smpquery portinfo -D 0 | sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p')" "$lid31"

"$LAB" sm --name "$name" restart >/dev/null
[[ $(lids "$name") == "$after" ]] || fail "new LIDs lost by a plain restart"
pass "new LIDs survive a plain restart"
