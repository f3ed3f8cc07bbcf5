#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.qos: ibatd with its default QoS settings on a QoS fabric (OpenSM with a policy of ServiceID,
# ServiceID-range, P_Key and two QoS-class rules, one of them for one destination's port only, and a
# second partition) answers what the SA answers for the same query: resolves
# through the native socket, the ACM socket (the ACM wire format, as librdmacm sends a path
# request) and the kernel twin (rdma_cm's attributes) equal `saquery` with the same --service_id /
# --qos_class / --pkey (DLID, SLID, SL, MTU, rate), for cache misses, cache hits and prefetched paths,
# also for a class no rule names; a ServiceID outside every configured range, or class 0, gets the
# default path from the cache without an SA query. Each QoS class comes in a GetTable of its own
# (asked with the class: with qos_classes = "auto", every class but 0), again after an SM restart.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
name=$(lab_name e2eqos)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'

# SLs: default 0, QoS class 4 -> 4, class 9 -> 1 to Hca3 only (0 elsewhere), iSER 3, NFS/RDMA (port
# 20049) 5, a site's range 6, P_Key 0x8002 7; class 2: no rule, the default 0.
cat >"$tmp/qos-policy.conf" <<'POLICY'
port-groups
    port-group
        name: STORAGE
        port-name: Hca3/P1
    end-port-group
end-port-groups
qos-levels
    qos-level
        name: GOLD
        sl: 4
    end-qos-level
    qos-level
        name: SILVER
        sl: 1
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        qos-class: 4
        qos-level-name: GOLD
    end-qos-match-rule
    qos-match-rule
        qos-class: 9
        destination: STORAGE
        qos-level-name: SILVER
    end-qos-match-rule
end-qos-match-rules
qos-ulps
    default                                                  : 0
    any, service-id 0x0000000001060CBC                       : 3
    any, service-id 0x0000000001064E51                       : 5
    any, service-id 0x1000000000000100-0x10000000000001FF    : 6
    any, pkey 0x8002                                         : 7
end-qos-ulps
POLICY
printf 'Default=0x7fff, ipoib : ALL=full ;\nstorage=0x8002 : ALL_CAS=full ;\n' >"$tmp/partitions.conf"
lab_up "$name" --topology "$TOPO/small-2sw4hca.net" --qos-policy "$tmp/qos-policy.conf" \
  --partitions "$tmp/partitions.conf" >/dev/null

src=Hca1
sgid=$(host "$name" $src gid)
acm=$E2E_DIR/acm.sock
write_config "$E2E_DIR/d.toml" \
  'qos_service_ids = ["iser", "nfs-rdma", "0x1000000000000100-0x10000000000001ff"]'
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
start_ibatd "$name" $src d --acm-socket "$acm"
dests=(Hca2 Hca3 Hca4)
for dest in "${dests[@]}"; do wait_resolving d "$(host "$name" $dest gid)"; done
sa_queries() { jq_py "$(cli d stats --json)" 'j["sa_queries"]'; }

# same_path WHAT GOT WANT: GOT (ibat resolve --json) has WANT's (saquery_path) DLID, SLID, SL, MTU, rate
same_path() {
  python3 - "$2" "$3" <<'PY' || fail "$1: ibatd and saquery differ: $2 / $3"
import json, sys
got, want = json.loads(sys.argv[1]), json.loads(sys.argv[2])
diff = {k: (got[k], v) for k, v in want.items() if k != "pkt_life" and got[k] != v}
assert not diff, diff
PY
}

# --- native socket: each query as saquery asks it, a miss then a hit
cases=("" "--service_id 0x1060CBC" "--service_id 0x1064E51" "--service_id 0x1000000000000180" "--qos_class 4"
       "--pkey 0x8002" "--qos_class 9" "--qos_class 2" "--service_id 0x1060CBC --qos_class 4")
ibat_args() {  # saquery's options as ibat resolve's
  sed -e 's/--service_id/--service-id/; s/--qos_class/--qos-class/' <<<"$1"
}
want_sl=(0 3 5 6 4 7 0 0 4)  # iSER with class 4: OpenSM's qos-match-rules come before its qos-ulps
for dest in "${dests[@]}"; do
  dgid=$(host "$name" $dest gid)
  for i in "${!cases[@]}"; do
    # shellcheck disable=SC2086  # the options split on purpose
    want=$(saquery_path "$name" $src "$sgid" "$dgid" ${cases[$i]})
    sl=${want_sl[$i]}
    [[ $dest == Hca3 && ${cases[$i]} == "--qos_class 9" ]] && sl=1  # the rule's port group
    expect_eq "saquery $dest ${cases[$i]:-(default)}: SL" "$(jq_py "$want" 'j["sl"]')" "$sl"
    for round in miss hit; do
      before=$(sa_queries)
      # shellcheck disable=SC2086
      got=$(cli d resolve --dgid "$dgid" $(ibat_args "${cases[$i]}") --json) ||
        fail "ibat resolve $dest ${cases[$i]}: exit $?"
      same_path "$dest ${cases[$i]:-(default)} ($round)" "$got" "$want"
      # The default path is the prefetched table's: neither a miss nor a hit asks the SA.
      if [[ $round == hit || -z ${cases[$i]} ]]; then
        expect_eq "$dest ${cases[$i]:-(default)} ($round): SA queries" "$(sa_queries)" "$before"
      fi
    done
  done
done
pass "native: ${#dests[@]} destinations x ${#cases[@]} queries equal saquery, miss and hit; default paths from the table"

# --- Each QoS class came in a GetTable of its own (OpenSM answers it by the class's rules, the port
# group's included): every host's path of the class (its own too) is the table's, and the port asked
# four tables, the default paths' and those of classes 4, 9 and 2.
# class_paths TAG CLASS: "DGID=SL/ORIGIN ..." of the class's entries (the class alone), sorted.
class_paths() {
  cli "$1" paths --json | python3 -c 'import json, sys
print(" ".join(sorted("%s=%s/%s" % (p["dgid"], p["sl"], p["origin"]) for p in json.load(sys.stdin) if p.get("qos_class") == int(sys.argv[1]) and "service_id" not in p)))' "$2"
}
# want_class CLASS SL [HOST SL]: what class_paths says when every host's SL is SL (HOST's the other)
want_class() {
  for dest in $src "${dests[@]}"; do
    echo "$(host "$name" $dest gid)=$([[ $dest == "${3:-}" ]] && echo "$4" || echo "$2")/sa-table"
  done | sort | xargs
}
check_class_tables() {  # check_class_tables WHEN
  expect_eq "class-4 paths $1: SL 4, from the class's table" "$(class_paths d 4)" "$(want_class 4 4)"
  expect_eq "class-9 paths $1: SL 1 to Hca3 only" "$(class_paths d 9)" "$(want_class 9 0 Hca3 1)"
  expect_eq "class-2 paths $1 (no rule): the default SL" "$(class_paths d 2)" "$(want_class 2 0)"
}
check_class_tables "after the first resolves"
# A listed ServiceID with a class is keyed by both, and asked by GET with both.
expect_eq "iSER with class 4: cached apart, by GET" "$(cli d paths --json | python3 -c 'import json, sys
print(sorted({p["origin"] for p in json.load(sys.stdin) if p.get("qos_class") == 4 and p.get("service_id") == "0x1060cbc"}))')" "['sa-get']"
expect_eq "GetTables answered (the default paths' and classes 4, 9, 2)" \
  "$(jq_py "$(cli d stats --json)" 'j["sa_tables_answered"]')" 4

# --- outside every range, or class 0: the default path (SL 0), from the cache, no SA query
dgid=$(host "$name" Hca2 gid)
before=$(sa_queries)
for args in "--service-id 0x106C350" "--service-id 0x1000000000000200" "--qos-class 0" "--service-id 0x106C350 --qos-class 0"; do
  # shellcheck disable=SC2086
  got=$(cli d resolve --dgid "$dgid" $args --json) || fail "ibat resolve $args: exit $?"
  expect_eq "$args: SL (the default path)" "$(jq_py "$got" 'j["sl"]')" 0
done
expect_eq "SA queries for ServiceIDs outside every range and class 0" "$(sa_queries)" "$before"
pass "a ServiceID outside every range, or QoS class 0, gets the cached default path, no SA query"

# The same queries through ACM and the kernel twin, each compared with saquery's whole path:
# (saquery options | ServiceID QoS-class P_Key for ACM | the twin's options as rdma_cm sends them)
acm_cases=("|0 0 0|--service-id 0x106C350"
           "--service_id 0x1060CBC|0x1060CBC 0 0|--service-id 0x1060CBC"
           "--service_id 0x10000000000001FF|0x10000000000001FF 0 0|--service-id 0x10000000000001FF"
           "--qos_class 4|0 4 0|--service-id 0x106C350 --qos-class 4"
           "--qos_class 9|0 9 0|--service-id 0x106C350 --qos-class 9"
           "--pkey 0x8002|0 0 0x8002|--service-id 0x106C350 --pkey 0x8002")

# --- ACM: a path request carrying the ServiceID, QoS class and P_Key in its record, as librdmacm
# sends one: the answer as JSON in saquery_path's units
acm_path() {  # acm_path DGID SERVICE_ID QOS_CLASS PKEY
  python3 - "$acm" "$sgid" "$@" <<'PY'
import ipaddress, json, socket, struct, sys
path, sgid, dgid = sys.argv[1], sys.argv[2], sys.argv[3]
sid, qos, pkey = (int(v, 0) for v in sys.argv[4:7])
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
rec = bytearray(64)
struct.pack_into(">Q", rec, 0, sid)
rec[8:24] = ipaddress.IPv6Address(dgid).packed
rec[24:40] = ipaddress.IPv6Address(sgid).packed
struct.pack_into(">HH", rec, 50, pkey, qos << 4)
entry = struct.pack("=IHH", 2, 0x0010, 0) + bytes(rec)  # ACM_EP_FLAG_DEST, ACM_EP_INFO_PATH
hdr = struct.pack("=BBB3sHQ", 1, 1, 0, b"\0\0\0", 16 + len(entry), 7)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(hdr + entry)
head = b""
while len(head) < 16: head += s.recv(16 - len(head))
length = struct.unpack_from("=H", head, 6)[0]
body = b""
while len(body) < length - 16: body += s.recv(length - 16 - len(body))
assert head[2] == 0, f"ACM status {head[2]}"
p = body[8:72]
print(json.dumps({"dlid": struct.unpack_from(">H", p, 40)[0], "slid": struct.unpack_from(">H", p, 42)[0],
                  "sl": p[53] & 0xF, "mtu": MTU[p[54] & 0x3F], "rate": RATE[p[55] & 0x3F]}))
PY
}
# --- the kernel twin as rdma_cm asks: SERVICE_ID, PKEY, and QOS_CLASS (the ToS) when set
twin() { "$TWIN" --socket "$E2E_DIR/d.lsa" --sgid "$sgid" --caller rdma_cm "$@"; }
twin_path() {  # twin_path DGID TWIN-ARGS...: the twin's path as JSON in saquery_path's units
  local dgid=$1; shift
  twin "$@" "$dgid" | python3 -c '
import json, sys
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
g = json.loads(sys.stdin.readline())
assert g["outcome"] == "path", g
print(json.dumps({"dlid": g["dlid"], "slid": g["slid"], "sl": g["sl"], "mtu": MTU[g["mtu"]], "rate": RATE[g["rate"]]}))'
}
for dest in Hca3 Hca4; do
  dgid=$(host "$name" $dest gid)
  for c in "${acm_cases[@]}"; do
    IFS='|' read -r sa_args acm_args twin_args <<<"$c"
    # shellcheck disable=SC2086  # the options split on purpose
    want=$(saquery_path "$name" $src "$sgid" "$dgid" $sa_args)
    for round in first again; do
      # shellcheck disable=SC2086
      got=$(acm_path "$dgid" $acm_args) || fail "ACM $dest $acm_args: $got"
      same_path "ACM $dest ${sa_args:-(default)} ($round)" "$got" "$want"
      # shellcheck disable=SC2086
      got=$(twin_path "$dgid" $twin_args) || fail "twin $dest $twin_args: $got"
      same_path "kernel twin $dest ${sa_args:-(default)} ($round)" "$got" "$want"
    done
  done
done
pass "ACM path requests and the kernel twin (rdma_cm) get saquery's path for each ServiceID, QoS class and P_Key"

dgids=(); for dest in "${dests[@]}"; do dgids+=("$(host "$name" $dest gid)"); done
check_twin() {  # check_twin SL TWIN-ARGS...: every destination's path has that SL
  local want=$1; shift
  local out
  out=$(twin "$@" "${dgids[@]}") || fail "twin $*: exit $?: $out"
  python3 - "$want" "$out" <<'PY' || fail "twin $*: $out"
import json, sys
for line in sys.argv[2].splitlines():
    g = json.loads(line)
    assert g["outcome"] == "path" and g["sl"] == int(sys.argv[1]), g
PY
}
check_twin 5 --service-id 0x1064E51
check_twin 0 --service-id 0x106C350 --qos-class 0
pass "kernel twin (rdma_cm): NFS/RDMA SL 5; an ephemeral port with ToS 0 the default SL"

# --- an SM restart: the kept-apart paths are renewed and still carry the policy's SL
"$LAB" sm --name "$name" restart >/dev/null
check_twin 3 --service-id 0x1060CBC
got=$(cli d resolve --dgid "$(host "$name" Hca3 gid)" --service-id 0x1064E51 --json)
expect_eq "after SM restart: NFS/RDMA SL" "$(jq_py "$got" 'j["sl"]')" 5
# The four tables are asked again, once each; each class's paths are its table's still.
deadline=$((SECONDS + 30))
until (($(jq_py "$(cli d stats --json)" 'j["sa_tables_answered"]') >= 8)); do
  ((SECONDS < deadline)) || fail "the four tables not asked again within 30 s of the SM restart: $(cli d stats --json)"
  sleep 0.1
done
expect_eq "GetTables answered after the restart" "$(jq_py "$(cli d stats --json)" 'j["sa_tables_answered"]')" 8
check_class_tables "after the SM restart"
got=$(twin_path "$(host "$name" Hca3 gid)" --service-id 0x106C350 --qos-class 9)
expect_eq "after SM restart: kernel twin, class 9 to Hca3: SL" "$(jq_py "$got" 'j["sl"]')" 1
pass "after an SM restart the policy's SLs still hold"
