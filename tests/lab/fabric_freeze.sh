#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.freeze: while the whole fabric is frozen for 10 s, resolutions time out; afterwards the
# same process (no restart) resolves again.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name ffrz)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
dgid=$(gid_of "$name" h0020)
out=$FABRIC_ENV_CACHE/results
on_node "$name" h0010 true
(on_node_exec "$name" h0010 "$PROBE" --dgid "$dgid" --json --count 40 --interval-ms 400 --timeout-ms 200 --retries 2 >"$out") &
probe_pid=$!
on_exit 'kill "$probe_pid" 2>/dev/null || true'
wait_event "$out" 'e["result"] == "ok"' 15 >/dev/null
frozen_at=$(now_ms)
"$LAB" freeze --name "$name" 10 >/dev/null
wait "$probe_pid" || true  # its exit code is the last resolution's, checked below
python3 - "$out" "$frozen_at" <<'PY' || fail "unexpected results: $(cat "$out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
frozen_at = int(sys.argv[2])
assert len(lines) == 40, len(lines)
before = [l for l in lines if l["wall_ms"] < frozen_at]
timeouts = [l for l in lines if l["result"] == "timeout"]
assert before and all(l["result"] == "ok" for l in before), "not ok before the freeze"
assert timeouts, "no timeout while frozen"
last_timeout = max(l["wall_ms"] for l in timeouts)
after = [l for l in lines if l["wall_ms"] > last_timeout]
assert len(after) >= 3 and all(l["result"] == "ok" for l in after), "no recovery after the freeze"
print(f"{len(timeouts)} timeouts while frozen, then {len(after)} ok in the same process")
PY
pass "freeze: timeouts, then recovery without a restart"
