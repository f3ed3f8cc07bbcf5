#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.local_sa: ibatd as the kernel's local SA on the lab. The kernel twin (ibat-kernel-twin) sends
# the RESOLVE requests Linux sends for IPoIB, rdma_cm and SRP to ibatd's [linux] local_sa_socket and
# judges each reply as the kernel would: every destination on fattree-32 gets saquery's path, an
# unknown DGID gets F_ERR (the kernel asks the SA), and an SM restart under twin load fails nothing.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
name=$(lab_name e2elsa)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0003
sgid=$(host "$name" $src gid)
write_config "$E2E_DIR/d.toml"
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
start_ibatd "$name" $src d
wait_resolving d "$(host "$name" h0010 gid)"
grep -q "local SA responder: answering" "$E2E_DIR/d.err" || fail "no start-up line of the responder: $(cat "$E2E_DIR/d.err")"

twin() { "$TWIN" --socket "$E2E_DIR/d.lsa" --sgid "$sgid" "$@"; }
dests=() dgids=()
for i in $(seq 0 31); do
  node=$(printf 'h%04d' "$i")
  [[ $node == "$src" ]] && continue
  dests+=("$node") dgids+=("$(host "$name" "$node" gid)")
done

# every destination, as IPoIB asks (first a miss through the SA, then a hit), equals saquery
twin --caller ipoib --rounds 2 "${dgids[@]}" >"$E2E_DIR/ipoib.jsonl" || fail "twin failed: exit $?"
for i in "${!dests[@]}"; do saquery_path "$name" $src "$sgid" "${dgids[$i]}"; done >"$E2E_DIR/saquery.jsonl"
python3 - "$E2E_DIR/ipoib.jsonl" "$E2E_DIR/saquery.jsonl" <<'PY' || fail "twin answers differ from saquery"
import json, sys
MTU = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
RATE = {2.5: 2, 10: 3, 30: 4, 5: 5, 20: 6, 40: 7, 60: 8, 80: 9, 120: 10, 14: 11, 56: 12, 112: 13,
        168: 14, 25: 15, 100: 16, 200: 17, 300: 18, 28: 19, 50: 20, 400: 21, 600: 22}
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == 2 * len(want), (len(got), len(want))
for n, g in enumerate(got):
    w = want[n % len(want)]
    assert g["outcome"] == "path", g
    assert g["flags"] == 0x0A, g  # PRIMARY|OUTBOUND for a unidirectional (IPoIB) query
    exp = {"dlid": w["dlid"], "slid": w["slid"], "sl": w["sl"], "mtu": MTU[w["mtu"]], "rate": RATE[w["rate"]]}
    diff = {k: (g[k], v) for k, v in exp.items() if g[k] != v}
    assert not diff, f"{g['dgid']}: (twin, saquery) differ: {diff}"
PY
pass "ipoib: ${#dests[@]} destinations x 2 equal saquery (DLID, SLID, SL, MTU, rate)"

# rdma_cm (path_use ALL: the record must be reversible, flagged GMP|PRIMARY|BIDIRECTIONAL) and SRP
twin --caller rdma_cm "${dgids[@]:0:4}" >"$E2E_DIR/rdma_cm.jsonl"
twin --caller srp "${dgids[@]:0:4}" >"$E2E_DIR/srp.jsonl"
python3 - "$E2E_DIR/rdma_cm.jsonl" "$E2E_DIR/srp.jsonl" <<'PY' || fail "rdma_cm/srp answers wrong"
import json, sys
for f, flags in ((sys.argv[1], 0x2B), (sys.argv[2], 0x0A)):
    for l in open(f):
        g = json.loads(l)
        assert g["outcome"] == "path" and g["flags"] == flags and g["dlid"] > 0, g
PY
pass "rdma_cm gets 0x2B-flagged reversible paths, SRP unidirectional ones"

# cached answers per second, one in flight, against an in-process datagram echo (docs/linux.md)
bench=$(twin --caller ipoib --bench 3000 "${dgids[@]}") || fail "twin --bench: some cached answer was not a path: $bench"
echo "bench: $bench"

# an unknown DGID: F_ERR, so the kernel asks the SA at once (not after its 2 s timeout)
out=$(twin --caller ipoib fe80::dead:beef:0:1)
expect_contains "unknown DGID" "$out" '"outcome":"fallback"'

# SM restart under twin load: nothing fails (no -EIO, no kernel timeout), every path has the right DLID
(until [[ -e $E2E_DIR/restarted ]]; do twin --caller ipoib "${dgids[@]:0:8}" || exit 1; done
 twin --caller ipoib --rounds 4 "${dgids[@]:0:8}") >"$E2E_DIR/restart.jsonl" &
load=$!
"$LAB" sm --name "$name" restart >/dev/null
touch "$E2E_DIR/restarted"
wait $load || fail "twin under SM restart failed"
for i in 0 1 2 3 4 5 6 7; do echo "${dgids[$i]} $(host "$name" "${dests[$i]}" lid)"; done >"$E2E_DIR/lids.txt"
python3 - "$E2E_DIR/restart.jsonl" "$E2E_DIR/lids.txt" <<'PY' || fail "SM restart under twin load"
import collections, json, sys
lid = dict(l.split() for l in open(sys.argv[2]))
outcomes = collections.Counter()
for l in open(sys.argv[1]):
    g = json.loads(l)
    outcomes[g["outcome"]] += 1
    assert g["outcome"] in ("path", "fallback"), g
    if g["outcome"] == "path":
        assert g["dlid"] == int(lid[g["dgid"]]), g
assert outcomes["path"] > 0, outcomes
print("ok: SM restart under twin load:", dict(outcomes))
PY

stats=$(cli d stats --json)
python3 - "$stats" <<'PY' || fail "local_sa stats: $stats"
import json, sys
s = json.loads(sys.argv[1])["local_sa"]
assert s["running"] and s["requests"] >= 62 + 8 + 1 + 32 + 3000 and s["answered"] >= 62 + 8, s
assert s["errors"]["total"] >= 1 and s["answer_p99_us"] > 0, s
PY
pass "stats: local_sa requests, answered, errors and latency reported"
stop_ibatd d
expect_eq "ibatd exit code" "$DAEMON_EXIT" 0
