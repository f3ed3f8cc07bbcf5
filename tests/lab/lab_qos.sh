#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.qos: `ibat-lab up --qos-policy FILE --partitions FILE` runs OpenSM with that QoS policy and
# partition file: saquery's PathRecords carry the SL the policy gives a ServiceID, a QoS class and
# a P_Key (and the default SL without them), the second P_Key exists, both survive `sm restart`
# and a fail-over to the standby SM after the caller's files are gone, and a file that is missing or that OpenSM rejects fails `up`
# with exit 9 and a message naming the file and quoting OpenSM.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name qos)
bad=$(lab_name qosbad)
small=$TOPO/small-2sw4hca.net
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
LAB_FABRICS+=("$bad")  # failed ups keep their folder for the logs

# OpenSM 3.3's full policy (qos-levels + qos-match-rules) for the QoS class, then the simplified
# qos-ulps for ServiceIDs and the P_Key; the match rules come first, the ulps after them.
cat >"$tmp/qos-policy.conf" <<'EOF'
qos-levels
    qos-level
        name: GOLD
        sl: 4
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        qos-class: 4
        qos-level-name: GOLD
    end-qos-match-rule
end-qos-match-rules
qos-ulps
    default                                  : 0
    any, service-id 0x0000000001060CBC       : 3
    any, service-id 0x0000000001064E55       : 5
    any, pkey 0x8002                         : 6
end-qos-ulps
EOF
printf 'Default=0x7fff, ipoib : ALL=full ;\nstorage=0x8002 : ALL_CAS=full ;\n' >"$tmp/partitions.conf"

# --- files up refuses before anything starts (exit 9, the file named)
expect_exit 9 "missing --qos-policy file" -- \
  "$LAB" up --name "$bad" --topology "$small" --qos-policy "$tmp/none.conf"
expect_contains "missing policy message" "$LAST_ERR" "--qos-policy $tmp/none.conf: no such file"
expect_exit 9 "--partitions naming a folder" -- \
  "$LAB" up --name "$bad" --topology "$small" --partitions "$tmp"
expect_contains "folder message" "$LAST_ERR" "--partitions $tmp: is a folder"
[[ ! -e ${IBAT_LAB_DIR:-/tmp/ibat-lab}/$bad ]] ||
  fail "up started something for a missing file"
pass "nothing started for a missing or unreadable file"

# --- files OpenSM rejects: up fails instead of running without QoS / with the default partition
printf 'qos-ulps\n    default : 0\n    any, servce-id 0x1060CBC : 3\nend-qos-ulps\n' >"$tmp/bad-policy.conf"
expect_exit 9 "policy OpenSM cannot parse" -- \
  "$LAB" up --name "$bad" --topology "$small" --qos-policy "$tmp/bad-policy.conf"
expect_contains "bad policy message names the file" "$LAST_ERR" "--qos-policy $tmp/bad-policy.conf"
expect_contains "bad policy message quotes OpenSM" "$LAST_ERR" "ERR AC05: Syntax error (line 3"
expect_exit 3 "no fabric left up after a rejected policy" -- "$LAB" status --name "$bad"
printf 'storage=0xzz : ALL_CAS=full ;\n' >"$tmp/bad-partitions.conf"
expect_exit 9 "partitions OpenSM cannot parse" -- \
  "$LAB" up --name "$bad" --topology "$small" --partitions "$tmp/bad-partitions.conf"
expect_contains "bad partitions message names the file" "$LAST_ERR" "--partitions $tmp/bad-partitions.conf"
expect_contains "bad partitions message quotes OpenSM" "$LAST_ERR" "PARSE ERROR: line 1: bad partition definition"

# --- a QoS fabric
lab_up "$name" --topology "$small" --standby-sm Hca2 --qos-policy "$tmp/qos-policy.conf" \
  --partitions "$tmp/partitions.conf" >/dev/null
status=$("$LAB" status --name "$name" --json)
# field KEY...: a value of `status --json`, e.g. field qos_policy file
field() {
  python3 -c 'import functools,json,sys; print(functools.reduce(lambda v, k: v[k], sys.argv[1:], json.load(sys.stdin)))' "$@" <<<"$status"
}
expect_eq "status: policy source" "$(field qos_policy source)" "$tmp/qos-policy.conf"
expect_eq "status: partitions source" "$(field partitions source)" "$tmp/partitions.conf"
copy=$(field qos_policy file)
[[ $copy == "$(field dir)"/* ]] || fail "the policy OpenSM reads ($copy) is not in the fabric's folder"
cmp -s "$copy" "$tmp/qos-policy.conf" || fail "the fabric's policy copy differs from the file given"
pass "OpenSM reads a copy of the policy in the fabric's folder"
grep -qx "qos TRUE" "$(field dir)/opensm.conf" || fail "opensm.conf has no 'qos TRUE'"
pass "opensm.conf: qos TRUE"

src=$(host_field "$name" Hca1 gid)
dst=$(host_field "$name" Hca4 gid)
# sl_of ARGS...: the SL of the PathRecord saquery gets from Hca1 to Hca4 with ARGS
sl_of() {
  local out
  out=$("$LAB" run --name "$name" --node Hca1 -- saquery -p --sgid-to-dgid "$src-$dst" "$@")
  sed -n 's/^[[:space:]]*sl\.*\(0x[0-9a-fA-F]*\)$/\1/p' <<<"$out" | head -1
}
check_sls() {
  local when=$1
  expect_eq "$when: SL without ServiceID" "$(sl_of)" 0x0
  expect_eq "$when: SL for ServiceID 0x1060CBC (iSER)" "$(sl_of --service_id 0x1060CBC)" 0x3
  expect_eq "$when: SL for ServiceID 0x1064E55 (NFS/RDMA)" "$(sl_of --service_id 0x1064E55)" 0x5
  expect_eq "$when: SL for a ServiceID no rule names" "$(sl_of --service_id 0x1060CBD)" 0x0
  expect_eq "$when: SL for QoS class 4" "$(sl_of --qos_class 4)" 0x4
  expect_eq "$when: SL for QoS class 2 (no rule)" "$(sl_of --qos_class 2)" 0x0
  expect_eq "$when: SL for P_Key 0x8002" "$(sl_of --pkey 0x8002)" 0x6
  expect_eq "$when: SL for P_Key 0x7fff" "$(sl_of --pkey 0x7fff)" 0x0
}
check_sls "up"

# --- the second P_Key: in the HCAs' P_Key tables, paths in it, none in a P_Key of no partition
lid=$(host_field "$name" Hca1 lid)
pktr=$("$LAB" run --name "$name" --node Hca1 -- saquery PKeyTableRecord --smkey 1 "$lid")
[[ $pktr =~ 0x8002 ]] || fail "Hca1's P_Key table has no 0x8002: $pktr"
pass "Hca1's P_Key table holds 0x8002 (full member)"
out=$("$LAB" run --name "$name" --node Hca1 -- saquery -p --sgid-to-dgid "$src-$dst" --pkey 0x8002)
expect_contains "path in P_Key 0x8002" "$out" "pkey....................0x8002"
out=$("$LAB" run --name "$name" --node Hca1 -- saquery -p --sgid-to-dgid "$src-$dst" --pkey 0x8003)
[[ $out != *PathRecord* ]] || fail "a path in P_Key 0x8003, which no partition defines: $out"
pass "no path in P_Key 0x8003 (no partition)"

# --- the fabric keeps its files: gone from the caller, OpenSM restarts with the same policy
rm "$tmp/qos-policy.conf" "$tmp/partitions.conf"
"$LAB" sm --name "$name" restart >/dev/null
check_sls "after sm restart"
out=$("$LAB" run --name "$name" --node Hca1 -- saquery -p --sgid-to-dgid "$src-$dst" --pkey 0x8002)
expect_contains "after sm restart: path in P_Key 0x8002" "$out" "pkey....................0x8002"
"$LAB" sm --name "$name" failover >/dev/null
check_sls "after a fail-over to the standby SM"
