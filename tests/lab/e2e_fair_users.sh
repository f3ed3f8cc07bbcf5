#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.fair_users: one local user floods ibatd with misses while another user and the kernel ask
# (docs/security.md known gap 1). uid 65534 opens 70 connections and sends 1,024 RESOLVEs on each,
# every one for a destination the SA has no record of (each a GET of its own, 60 s deadline); its
# pending share (max_pending_per_uid, 32,768) fills and the rest are refused. While its misses
# queue for the SA (sa_rate 1,000/s: half a minute of them), uid 1 resolves one new real
# destination a second and the kernel twin asks for another one a second as IPoIB. Every one of
# those gets a path to the destination's LID, none `overloaded` or timed out: their GETs take turns with
# the flood's (core::FairQueue) instead of queueing behind it, each sent after at most one GET of
# each other requester (sa_turns_waited_max, a count, not a clock). STATS names the flooder first,
# with its refusals.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
LOAD=${IBAT_LOAD:-$BIN/ibat-load}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
[[ -x $LOAD ]] || fail "ibat-load not built at $LOAD (build target ibat-load)"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed to run clients as other users"
name=$(lab_name e2efair)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0003
sgid=$(host "$name" $src gid)
chmod 755 "$E2E_DIR"  # other users reach the sockets (mode 0666) in it
write_config "$E2E_DIR/d.toml" 'prefetch = "off"'  # every destination a miss: no GetTable fills the cache
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
start_ibatd "$name" $src d
wait_resolving d "$(host "$name" h0004 gid)"
as_user() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }

# uid 1's destinations (GID and LID), the kernel's, and the flood's
: >"$E2E_DIR/user.txt"
kernel_dgids=() kernel_lids=()
for i in $(seq 5 31); do
  node=$(printf 'h%04d' "$i")
  dlid=$(host "$name" "$node" lid)  # the DLID saquery gives here (LMC 0: e2e.local_sa compares all fields)
  if ((i <= 18)); then echo "$(host "$name" "$node" gid) $dlid" >>"$E2E_DIR/user.txt"
  else kernel_dgids+=("$(host "$name" "$node" gid)") kernel_lids+=("$dlid"); fi
done
python3 -c 'for n in range(70 * 1024): print("fe80::dead:%x:%x:%x" % (n >> 32, (n >> 16) & 0xFFFF, n & 0xFFFF))' \
  >"$E2E_DIR/flood.txt"

as_user 65534 "$LOAD" --json --socket "$E2E_DIR/d.sock" --dgids "$E2E_DIR/flood.txt" --connections 70 \
  --depth 1024 --count $((70 * 1024)) --timeout-ms 60000 >"$E2E_DIR/flood.json" 2>&1 &
flood=$!
users() { cli d stats --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["server"]["users"]))'; }
deadline=$((SECONDS + 60))
until [[ $(jq_py "$(users)" 'sum(u["resolves_refused"] for u in j["top"] if u["uid"] == 65534)') -gt 0 ]]; do
  ((SECONDS < deadline)) || fail "the flood did not fill uid 65534's pending share in 60 s: $(users)"
  sleep 0.2
done
pending=$(cli d stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pending"])')
pass "uid 65534: its pending share full ($pending requests pending), the rest refused"

# meanwhile: uid 1, one new destination a second; the kernel as IPoIB, one a second
as_user 1 "$LOAD" --json --socket "$E2E_DIR/d.sock" --dgids "$E2E_DIR/user.txt" --connections 1 --depth 1 \
  --rate 1 --count 14 --expect-exists >"$E2E_DIR/user.json" 2>"$E2E_DIR/user.err" &
user=$!
for i in "${!kernel_dgids[@]}"; do
  "$TWIN" --socket "$E2E_DIR/d.lsa" --sgid "$sgid" --caller ipoib "${kernel_dgids[$i]}" || fail "twin failed: exit $?"
  sleep 1  # the load's shape: one request a second
done >"$E2E_DIR/kernel.jsonl"
wait $user || fail "uid 1's resolves under the flood: $(cat "$E2E_DIR/user.json" "$E2E_DIR/user.err")"
still=$(cli d stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pending"])')
((still > 1000)) || fail "the flood was over before uid 1 and the kernel finished ($still pending): the test proves nothing"

python3 - "$E2E_DIR/user.json" <<'PY' || fail "uid 1's resolves under the flood"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["passed"] and s["ok"] == 14 and s["failures_total"] == 0 and s["wrong_dlid"] == 0, s
print("ok: uid 1: 14 of 14 with the destination's LID; latency ms p50 %(p50)s max %(max)s" % s["latency_ms"])
PY
for i in "${!kernel_lids[@]}"; do echo "${kernel_dgids[$i]} ${kernel_lids[$i]}"; done >"$E2E_DIR/kernel_lids.txt"
python3 - "$E2E_DIR/kernel.jsonl" "$E2E_DIR/kernel_lids.txt" <<'PY' || fail "the kernel's requests under the flood"
import json, sys
lid = dict(l.split() for l in open(sys.argv[2]))
got = [json.loads(l) for l in open(sys.argv[1])]
assert len(got) == len(lid), (len(got), len(lid))
for g in got:
    assert g["outcome"] == "path" and g["dlid"] == int(lid[g["dgid"]]), g
print("ok: kernel (IPoIB): %d of %d answered with the destination's LID" % (len(got), len(lid)))
PY
pass "under a 70 x 1,024 flood of uid 65534, uid 1 and the kernel are answered, each with the destination's LID"

# Each of uid 1's and the kernel's GETs went within one turn of each other requester with GETs
# queued (uid 65534 and the other of the two): ibatd counts the most GETs sent for others ahead of
# a requester's only queued GET. Queued behind the flood instead, one would wait thousands.
turns=$(cli d stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["sa_turns_waited_max"])')
((turns <= 2)) || fail "a lone GET waited for $turns GETs of other requesters (fair turns: at most 2)"
pass "no requester's only queued GET waited for more than $turns GETs of others (at most 2: one of each)"

users=$(users)
python3 - "$users" <<'PY' || fail "STATS per uid: $users"
import json, sys
u = json.loads(sys.argv[1])
top = {x["uid"]: x for x in u["top"]}
assert u["top"][0]["uid"] == 65534, u
assert top[65534]["resolves"] + top[65534]["resolves_refused"] == 70 * 1024, top[65534]
assert top[65534]["resolves_refused"] > 0 and top[65534]["connections"] == 70, top[65534]
assert top[1]["resolves"] == 14 and top[1]["resolves_refused"] == 0, top[1]
print("ok: top users:", [(x["uid"], x["resolves"], x["resolves_refused"]) for x in u["top"]])
PY
pass "STATS server.users: uid 65534 first with its refusals, uid 1 never refused"
kill -INT $flood 2>/dev/null || true
wait $flood 2>/dev/null || true
stop_ibatd d
expect_eq "ibatd exit code" "$DAEMON_EXIT" 0
