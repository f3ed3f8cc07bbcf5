#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.loss: with 30% of the MADs through h0010's port dropped, 20 resolutions in a row still
# succeed thanks to MadRequester's retries, and the retries are counted.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name floss)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
dgid=$(gid_of "$name" h0020)
"$LAB" loss --name "$name" h0010 30 >/dev/null
out=$FABRIC_ENV_CACHE/results
on_node "$name" h0010 "$PROBE" --dgid "$dgid" --json --count 20 --interval-ms 0 --timeout-ms 100 --retries 12 >"$out" ||
  fail "a resolution failed at 30% loss: $(grep -v '"result":"ok"' "$out" | head -3)"
python3 - "$out" <<'PY' || fail "unexpected results: $(tail -2 "$out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 20 and all(l["result"] == "ok" for l in lines), lines
retries = lines[-1]["stats"]["mad_retries"]
assert retries > 0, "no retries counted at 30% loss"
print(f"20/20 resolved, {retries} MAD retries, {lines[-1]['stats']['mad_timeouts']} attempt timeouts")
PY
pass "resolution survives 30% MAD loss through retries"
