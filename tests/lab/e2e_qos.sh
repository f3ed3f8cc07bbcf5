#!/usr/bin/env bash
# e2e.qos: ibatd on a QoS fabric (OpenSM with a policy of ServiceID, ServiceID-range, QoS-class and
# P_Key rules, and a second partition) answers what the SA answers for the same query: resolves
# through the native socket, the ACM socket (the ACM wire format, as librdmacm sends a path
# request) and the kernel twin (rdma_cm's attributes) equal `saquery` with the same --service_id /
# --qos_class / --pkey, for cache misses, cache hits and prefetched paths; a ServiceID or QoS class
# outside every configured range gets the default path from the cache without an SA query.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
name=$(lab_name e2eqos)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# SLs: default 0, QoS class 4 -> 4, iSER 3, NFS/RDMA (port 20049) 5, a site's range 6, P_Key 0x8002 7.
cat >"$tmp/qos-policy.conf" <<'POLICY'
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
  'qos_service_ids = ["iser", "nfs-rdma", "0x1000000000000100-0x10000000000001ff"]' 'qos_classes = [4]'
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
       "--pkey 0x8002")
ibat_args() {  # saquery's options as ibat resolve's
  sed -e 's/--service_id/--service-id/; s/--qos_class/--qos-class/' <<<"$1"
}
want_sl=(0 3 5 6 4 7)
for dest in "${dests[@]}"; do
  dgid=$(host "$name" $dest gid)
  for i in "${!cases[@]}"; do
    # shellcheck disable=SC2086  # the options split on purpose
    want=$(saquery_path "$name" $src "$sgid" "$dgid" ${cases[$i]})
    expect_eq "saquery $dest ${cases[$i]:-(default)}: SL" "$(jq_py "$want" 'j["sl"]')" "${want_sl[$i]}"
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

# --- outside every range: the default path (SL 0), from the cache, no SA query
dgid=$(host "$name" Hca2 gid)
before=$(sa_queries)
for args in "--service-id 0x106C350" "--service-id 0x1000000000000200" "--qos-class 2" "--service-id 0x106C350 --qos-class 3"; do
  # shellcheck disable=SC2086
  got=$(cli d resolve --dgid "$dgid" $args --json) || fail "ibat resolve $args: exit $?"
  expect_eq "$args: SL (the default path)" "$(jq_py "$got" 'j["sl"]')" 0
done
expect_eq "SA queries for ServiceIDs and classes outside every range" "$(sa_queries)" "$before"
pass "a ServiceID or QoS class outside every range gets the cached default path, no SA query"

# --- ACM: a path request carrying the ServiceID / QoS class in its record, as librdmacm sends one
acm_sl() {  # acm_sl DGID SERVICE_ID QOS_CLASS: the SL of ibatd's ACM answer
  python3 - "$acm" "$sgid" "$1" "$2" "$3" <<'PY'
import ipaddress, socket, struct, sys
path, sgid, dgid, sid, qos = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0), int(sys.argv[5], 0)
rec = bytearray(64)
struct.pack_into(">Q", rec, 0, sid)
rec[8:24] = ipaddress.IPv6Address(dgid).packed
rec[24:40] = ipaddress.IPv6Address(sgid).packed
struct.pack_into(">H", rec, 52, qos << 4)
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
print(body[8 + 53] & 0xF)
PY
}
for dest in Hca3 Hca4; do
  dgid=$(host "$name" $dest gid)
  expect_eq "ACM $dest default" "$(acm_sl "$dgid" 0 0)" 0
  expect_eq "ACM $dest iSER" "$(acm_sl "$dgid" 0x1060CBC 0)" 3
  expect_eq "ACM $dest site range" "$(acm_sl "$dgid" 0x10000000000001FF 0)" 6
  expect_eq "ACM $dest QoS class 4" "$(acm_sl "$dgid" 0 4)" 4
done
pass "ACM path requests get saquery's SL for their ServiceID and QoS class"

# --- the kernel twin as rdma_cm asks: SERVICE_ID, and QOS_CLASS (the ToS) when set
twin() { "$TWIN" --socket "$E2E_DIR/d.lsa" --sgid "$sgid" --caller rdma_cm "$@"; }
dgids=(); for dest in "${dests[@]}"; do dgids+=("$(host "$name" $dest gid)"); done
check_twin() {  # check_twin SL TWIN-ARGS...
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
check_twin 3 --service-id 0x1060CBC
check_twin 5 --service-id 0x1064E51
check_twin 4 --service-id 0x106C350 --qos-class 4
check_twin 0 --service-id 0x106C350 --qos-class 0
pass "kernel twin (rdma_cm): SL 3, 5, 4 and 0 as the policy gives them"

# --- an SM restart: the kept-apart paths are renewed and still carry the policy's SL
"$LAB" sm --name "$name" restart >/dev/null
check_twin 3 --service-id 0x1060CBC
got=$(cli d resolve --dgid "$(host "$name" Hca3 gid)" --service-id 0x1064E51 --json)
expect_eq "after SM restart: NFS/RDMA SL" "$(jq_py "$got" 'j["sl"]')" 5
pass "after an SM restart the policy's SLs still hold"
