#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.paths: on fattree-32, from 3 source hosts to every other host, ibat-probe's PathRecord
# equals saquery's (DLID, SLID, SL, MTU, rate, packet lifetime); 1x links make rates differ.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name fpath)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
hosts=$("$LAB" hosts --name "$name" --json)
out=$FABRIC_ENV_CACHE

for src in h0000 h0013 h0027; do
  sgid=$(python3 -c 'import json,sys; print(next(h["gid"] for h in json.loads(sys.argv[1]) if h["node"]==sys.argv[2]))' "$hosts" "$src")
  for dgid in $(python3 -c 'import json,sys; [print(h["gid"]) for h in json.loads(sys.argv[1]) if h["node"]!=sys.argv[2]]' "$hosts" "$src"); do
    on_node "$name" "$src" "$PROBE" --dgid "$dgid" --json >>"$out/probe" || fail "ibat-probe $src -> $dgid failed"
    echo "== $sgid $dgid" >>"$out/saquery"
    on_node "$name" "$src" saquery -p --sgid-to-dgid "$sgid-$dgid" >>"$out/saquery" || fail "saquery $src -> $dgid failed"
  done
done

python3 - "$out/probe" "$out/saquery" <<'PY'
import json, re, sys
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
probe = [json.loads(l) for l in open(sys.argv[1])]
sa = {}
for block in open(sys.argv[2]).read().split("== ")[1:]:
    head, body = block.split("\n", 1)
    f = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", body, re.M))
    sa[tuple(head.split())] = {"dlid": int(f["dlid"]), "slid": int(f["slid"]), "sl": int(f["sl"], 16),
                               "mtu": MTU[int(f["mtu"], 16) & 0x3F], "rate": RATE[int(f["rate"], 16) & 0x3F],
                               "pkt_life": int(f["pkt_life"], 16) & 0x3F}
assert len(probe) == 93 == len(sa), (len(probe), len(sa))
bad = []
for p in probe:
    want = sa[(p["sgid"], p["dgid"])]
    got = {k: p[k] for k in want}
    if got != want:
        bad.append((p["sgid"], p["dgid"], got, want))
assert not bad, "\n".join(map(str, bad[:10]))
rates = sorted({p["rate"] for p in probe})
assert len(rates) > 1, f"expected different rates (1x links), got {rates}"
print(f"93 paths equal to saquery's; rates seen: {rates}")
PY
pass "ibat-probe matches saquery on 93 paths"
