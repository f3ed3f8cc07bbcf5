#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.umad_twin: what the kernel MAD layer twin (lab/umad-twin) gives lab processes on the real
# OpenSM. RMPP: every NodeRecord of a 480-host tree in one GetTable, an SGID-only PathRecord
# GetTable with a record for every end port, every PathRecord pair of fattree-32, an SMP answer
# as one plain MAD; ACKs at each 64-segment window's end, as the kernel grants them. Under loss the
# SA's twin resends from its last ACKed segment after its 2 s ACK wait, so a saquery that waits
# longer (-t 5000) gets the whole table, and never a partial one. Several CAs: a host of rails-4x2
# sees both its HCAs (ibstat, saquery -C, smpquery, sminfo from each), and a CA of a second fabric
# answers with that fabric's SM.
source "$(dirname "$0")/lab_lib.sh"
big=$(lab_name tw-big); tree=$(lab_name tw-ft); rails=$(lab_name tw-rails); storage=$(lab_name tw-st)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
export IBAT_LAB_KERNEL=twin
run() { local name=$1 node=$2; shift 2; "$LAB" run --name "$name" --node "$node" -- "$@" 2>/dev/null; }
count() { grep -c "$1" || true; }
gid_of() {  # gid_of FABRIC NODE
  "$LAB" hosts --name "$1" --json | python3 -c "import json,sys; print([h['gid'] for h in json.load(sys.stdin) if h['node']=='$2'][0])"
}

# --- RMPP on a 480-host tree (24 switches): 504 end ports
"$LAB" topology fattree --spines 4 --leaves 20 --hosts-per-leaf 24 --output "$tmp/ft480.net"
lab_up "$big" --topology "$tmp/ft480.net" >/dev/null
IBAT_TWIN_STATS=$tmp/nodes.json run "$big" h0100 saquery -N >"$tmp/nodes.txt"
expect_eq "NodeRecords of the 480-host tree" "$(count 'NodeRecord dump' <"$tmp/nodes.txt")" 504
expect_eq "distinct node descriptions" "$(grep -o 'NodeDescription.*' "$tmp/nodes.txt" | sort -u | wc -l)" 504
stats() { python3 -c "import json; print(json.load(open('$1'))['$2'])"; }
expect_eq "one message reassembled from the SA's segments" "$(stats "$tmp/nodes.json" reassembled)" 1
[[ $(stats "$tmp/nodes.json" segments_received) -ge 280 ]] || fail "504 NodeRecords came in fewer than 280 segments"
pass "504 NodeRecords crossed as $(stats "$tmp/nodes.json" segments_received) segments"
expect_eq "ACKs of 283 segments: segment 1, then each 64-segment window's end, and the last" \
  "$(stats "$tmp/nodes.json" acks_sent)" 6
sgid=$(gid_of "$big" h0100)
run "$big" h0100 saquery -p --sgid "$sgid" -r 1 -n 1 >"$tmp/sgid.txt"
expect_eq "SGID-only PathRecord GetTable: a record for every end port" "$(count 'PathRecord dump' <"$tmp/sgid.txt")" 504
expect_eq "every record from h0100's GID" "$(grep -c "sgid.*$sgid$" "$tmp/sgid.txt")" 504
expect_eq "one record per destination" "$(grep -o 'dlid.*' "$tmp/sgid.txt" | sort -u | wc -l)" 504
"$LAB" down --name "$big" >/dev/null

# --- fattree-32: every pair, one record, and a lossy port
lab_up "$tree" --topology "$TOPO/fattree-32.net" >/dev/null
expect_eq "saquery -p: every pair of the 38 end ports" "$(run "$tree" h0003 saquery -p | count 'PathRecord dump')" $((38 * 38))
IBAT_TWIN_STATS=$tmp/one.json run "$tree" h0003 smpquery -D nodedesc 0,1,1 >"$tmp/one.txt"
expect_contains "a directed-route SMP through two switches" "$(cat "$tmp/one.txt")" "Node Description"
expect_eq "SMP answers are plain MADs, no segments" "$(stats "$tmp/one.json" segments_received)" 0
[[ $(stats "$tmp/one.json" received) -ge 1 ]] || fail "smpquery received no MAD"
"$LAB" loss --name "$tree" 'h0003[1]' 3 >/dev/null
# ibsim drops 3 % of what enters h0003's port: segments of the answer, not the request or the ACKs.
whole=0 resent=0
for i in $(seq 1 20); do
  rc=0
  IBAT_TWIN_STATS=$tmp/loss$i.json run "$tree" h0003 saquery -t 5000 -N >"$tmp/loss$i.txt" || rc=$?
  n=$(count 'NodeRecord dump' <"$tmp/loss$i.txt")
  if [[ $rc -eq 0 ]]; then
    [[ $n -eq 38 ]] || fail "run $i under loss printed $n NodeRecords, not all 38"
    whole=$((whole + 1))
    if [[ $(stats "$tmp/loss$i.json" segments_received) -gt 22 ]]; then resent=$((resent + 1)); fi
  else
    [[ $n -eq 0 ]] || fail "run $i under loss failed yet printed $n NodeRecords"
  fi
done
[[ $resent -gt 0 ]] || fail "3 % loss on h0003: no run of 20 (22 segments each) needed a resend"
[[ $whole -ge 18 ]] || fail "3 % loss: only $whole of 20 runs got the whole table"
pass "3 % loss: $whole of 20 runs whole (38 NodeRecords), $resent of them after the SA resent from its last ACK; never a partial table"
"$LAB" loss --name "$tree" 'h0003[1]' 0 >/dev/null

# --- several CAs per process: host g0001 of rails-4x2, and a CA of a storage fabric
lab_up "$rails" --topology "$TOPO/rails-4x2.net" >/dev/null
lab_up "$storage" --topology "$TOPO/small-2sw4hca.net" >/dev/null
host() { "$LAB" run --name "$rails" --host g0001 "$@" 2>/dev/null; }
expect_eq "CAs of g0001" "$(host -- ibstat -l | tr '\n' ' ')" "mlx5_0 mlx5_1 "
"$LAB" hosts --name "$rails" --json >"$tmp/hosts.json"
for ca in mlx5_0 mlx5_1; do
  want=$(python3 -c "import json; print([h['guid'] for h in json.load(open('$tmp/hosts.json')) if h['host']=='g0001' and h['ca']=='$ca'][0])")
  lid=$(python3 -c "import json; print([h['lid'] for h in json.load(open('$tmp/hosts.json')) if h['host']=='g0001' and h['ca']=='$ca'][0])")
  expect_eq "ibstat $ca port GUID" "$(host -- ibstat "$ca" | awk '/Port GUID/ {print $3}')" "$want"
  expect_eq "ibstat $ca base LID" "$(host -- ibstat "$ca" | awk '/Base lid/ {print $3}')" "$lid"
  expect_eq "smpquery -C $ca of its own LID" "$(host -- smpquery -C "$ca" nodedesc "$lid" | sed 's/.*\.\.\.//')" "g0001 $ca"
  expect_eq "saquery -C $ca: every node (8 HCAs, 4 leaves, 2 spines)" "$(host -- saquery -C "$ca" -N | count 'NodeRecord dump')" 14
  expect_contains "sminfo -C $ca" "$(host -- sminfo -C "$ca")" "SMINFO_MASTER"
done
both=$("$LAB" run --name "$rails" --host g0001 --also "$storage:Hca1" -- ibstat -l 2>/dev/null | tr '\n' ' ')
expect_eq "g0001 with a CA on the storage fabric" "$both" "ibsim0 mlx5_0 mlx5_1 "
# Both simulators number their GUIDs alike, so tell the SMs apart by the subnets they serve.
nodes_via() { "$LAB" run --name "$rails" --host g0001 --also "$storage:Hca1" -- saquery -C "$1" -N 2>/dev/null | count 'NodeRecord dump'; }
expect_eq "the storage CA's SA serves the storage fabric (2 switches, 4 HCAs)" "$(nodes_via ibsim0)" 6
expect_eq "in the same process the compute CA's SA serves rails-4x2" "$(nodes_via mlx5_1)" 14
