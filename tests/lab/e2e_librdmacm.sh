#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.librdmacm: IP resolution over ibatd's ACM socket as librdmacm and ib_acme do it, on the lab.
# The socket is reached through the two symlinks the packaged unit makes (ib_acme's ibacm-unix.sock,
# librdmacm's ibacm.sock). After `ibat neigh add`, the real `ib_acme -f i` prints the DLID saquery
# gives, and a client sending librdmacm's exact request (ucma_ib_resolve:
# IP source, IP destination, flag-less path hint; host-order length) gets one reply in one recv()
# with hdr.length exact and one PATH entry flagged exactly GMP|PRIMARY|BIDIRECTIONAL (0x2B) whose
# record is saquery's; an IP without neighbour gets status ENODATA, header only (docs/acm.md).
# Then the shipped default: ibatd with packaging/ibatd.toml as packaged (its acm_socket,
# /run/ibat/acm.sock, untouched; only the native socket and the warm cache are the test's), the
# links made by the packaged unit's own ExecStartPost lines, and ib_acme and librdmacm each at the
# name it uses without options (/run/ibacm-unix.sock, /run/ibacm.sock). The test runs in a mount
# namespace of its own with a tmpfs on /run: the host's /run is not touched.
if [[ ${E2E_PRIVATE_RUN:-0} != 1 ]]; then
  E2E_PRIVATE_RUN=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
mount -t tmpfs -o mode=0755 ibat-e2e-run /run || { echo "FAIL: cannot mount a tmpfs on /run" >&2; exit 1; }
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
ACME=$(command -v ib_acme) || fail "ib_acme not installed (Debian package ibacm)"
name=$(lab_name e2erdmacm)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0002
sgid=$(host "$name" $src gid)
acm=$E2E_DIR/acm.sock
start_ibatd "$name" $src d --acm-socket "$acm"
wait_resolving d "$(host "$name" h0009 gid)"
ln -s "$acm" "$E2E_DIR/ibacm-unix.sock"
ln -s "$E2E_DIR/ibacm-unix.sock" "$E2E_DIR/ibacm.sock"

# neigh IP NODE [TAG]: `ibat neigh add IP` with NODE's IPoIB hardware address (QPN 0x48 + GID) at
# daemon TAG (default d)
neigh() {
  local hw
  hw=$(python3 -c 'import ipaddress,sys; b=bytes([0,0,0,0x48])+ipaddress.IPv6Address(sys.argv[1]).packed; print(":".join(f"{x:02x}" for x in b))' \
    "$(host "$name" "$2" gid)")
  cli "${3:-d}" neigh add "$1" "$hw" || fail "neigh add $1: exit $?"
}
neigh 10.1.0.9 h0009
neigh 10.1.0.21 h0021

out=$("$ACME" -S "$E2E_DIR/ibacm-unix.sock" -f i -s 10.1.0.2 -d 10.1.0.9) || fail "ib_acme -f i: exit $?: $out"
expect_contains "ib_acme -f i -d 10.1.0.9" "$out" "return status 0x0"
want=$(jq_py "$(saquery_path "$name" $src "$sgid" "$(host "$name" h0009 gid)")" 'j["dlid"]')
expect_eq "ib_acme -f i -d 10.1.0.9: dlid (h0009)" "$(sed -n 's/^  dlid: \([0-9]*\)$/\1/p' <<<"$out")" "$want"

# librdmacm DEST [SOCKET]: librdmacm's request for DEST from 10.1.0.2 (to $E2E_DIR/ibacm.sock unless
# SOCKET); prints the record of the PATH entry as JSON, or "status N" for an error reply; fails on
# anything librdmacm or the kernel would reject.
librdmacm() {
  python3 - "${2:-$E2E_DIR/ibacm.sock}" "$1" <<'PY'
import ipaddress, json, socket, struct, sys
acm, dest = sys.argv[1], sys.argv[2]
HDR, EP = 16, 72
def entry(flags, typ, info):                  # acm_ep_addr_data: host-order flags/type
    return struct.pack("=IHH", flags, typ, 0) + info.ljust(64, b"\0")
hint = bytearray(64)                          # the caller's route hint: P_Key, reversible
struct.pack_into(">H", hint, 50, 0xFFFF); hint[49] = 0x81
body = (entry(1, 2, ipaddress.IPv4Address("10.1.0.2").packed) +      # ACM_EP_FLAG_SOURCE, IP
        entry(2, 2, ipaddress.IPv4Address(dest).packed) +            # ACM_EP_FLAG_DEST, IP
        entry(0, 0x10, bytes(hint)))                                 # path hint, no flag
msg = struct.pack("=BBB3sHQ", 1, 1, 0, b"\0" * 3, HDR + len(body), 0) + body
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(acm)
assert s.send(msg) == len(msg)
reply = s.recv(592)                           # one recv(), as ucma_ib_resolve
version, opcode, status, _, length, _ = struct.unpack_from("=BBB3sHQ", reply)
assert len(reply) >= HDR and len(reply) == length, f"recv {len(reply)} bytes, hdr.length {length}"
assert version == 1, version
if status:
    assert length == HDR, length
    print(f"status {status}"); sys.exit(0)
paths = []
for i in range((length - HDR) // EP):
    flags, typ = struct.unpack_from("=IH", reply, HDR + i * EP)
    info = reply[HDR + i * EP + 8: HDR + (i + 1) * EP]
    if typ == 0x10:
        assert flags == 0x2B, f"PATH entry flags {flags:#x}, the kernel needs exactly 0x2b"
        paths.append(info)
    else:
        assert typ in (2, 3) and flags & 1, f"entry {i}: type {typ} flags {flags:#x}"
assert len(paths) == 1, len(paths)
p = paths[0]
print(json.dumps({"dgid": str(ipaddress.IPv6Address(p[8:24])), "dlid": struct.unpack_from(">H", p, 40)[0],
                  "slid": struct.unpack_from(">H", p, 42)[0], "sl": struct.unpack_from(">H", p, 52)[0] & 0xF,
                  "mtu": p[54] & 0x3F, "pkt_life": p[56] & 0x3F}))
PY
}

for dest in 10.1.0.9:h0009 10.1.0.21:h0021; do
  ip=${dest%%:*} node=${dest#*:}
  dgid=$(host "$name" "$node" gid)
  got=$(librdmacm "$ip") || fail "librdmacm request for $ip rejected: $got"
  ref=$(saquery_path "$name" $src "$sgid" "$dgid")
  expect_eq "librdmacm $ip: dgid" "$(jq_py "$got" 'j["dgid"]')" "$dgid"
  for f in dlid slid sl pkt_life; do
    expect_eq "librdmacm $ip: $f ($node)" "$(jq_py "$got" "j['$f']")" "$(jq_py "$ref" "j['$f']")"
  done
  expect_eq "librdmacm $ip: mtu ($node)" \
    "$(jq_py "$got" '{1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}[j["mtu"]]')" "$(jq_py "$ref" 'j["mtu"]')"
done

got=$(librdmacm 10.9.9.9) || fail "librdmacm request for an IP without neighbour: $got"
expect_eq "librdmacm 10.9.9.9 (no neighbour)" "$got" "status 3"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0

# The shipped default. The packaged config as it is: start_ibatd adds only --socket and --cache-file.
packaged_toml=$LAB_TEST_DIR/../../packaging/ibatd.toml
unit=$LAB_TEST_DIR/../../packaging/ibatd.service
packaged_acm=$(sed -n 's/^acm_socket = "\(.*\)"$/\1/p' "$packaged_toml")
expect_eq "packaging/ibatd.toml: acm_socket" "$packaged_acm" /run/ibat/acm.sock
[[ ! -e /run/ibat ]] || fail "/run/ibat exists in the test's own /run"
IBATD_ACM_FROM_CONFIG=1 start_ibatd "$name" $src p --config "$packaged_toml"
[[ -S $packaged_acm ]] || fail "ibatd with the packaged config: no ACM socket at $packaged_acm: $(tail -5 "$E2E_DIR/p.err")"
# The links, by the unit's own lines (ExecStartPost=+COMMAND: run as root, outside the sandbox)
links=0
while IFS= read -r line; do
  read -r -a command <<<"${line#ExecStartPost=+}"
  "${command[@]}" || fail "$line: exit $?"
  links=$((links + 1))
done < <(grep '^ExecStartPost=+' "$unit")
expect_eq "ExecStartPost lines of packaging/ibatd.service" "$links" 2
for link in /run/ibacm-unix.sock /run/ibacm.sock; do
  expect_eq "$link leads to" "$(readlink -f "$link")" "$packaged_acm"
done
wait_resolving p "$(host "$name" h0009 gid)"
neigh 10.1.0.9 h0009 p
# ib_acme without -S: /run/ibacm-unix.sock
out=$("$ACME" -f i -s 10.1.0.2 -d 10.1.0.9) || fail "ib_acme -f i (no -S), packaged config: exit $?: $out"
expect_contains "ib_acme -f i -d 10.1.0.9 (no -S), packaged config" "$out" "return status 0x0"
want=$(jq_py "$(saquery_path "$name" $src "$sgid" "$(host "$name" h0009 gid)")" 'j["dlid"]')
expect_eq "ib_acme -f i -d 10.1.0.9 (no -S), packaged config: dlid" \
  "$(sed -n 's/^  dlid: \([0-9]*\)$/\1/p' <<<"$out")" "$want"
# librdmacm: /run/ibacm.sock
got=$(librdmacm 10.1.0.9 /run/ibacm.sock) || fail "librdmacm request at /run/ibacm.sock rejected: $got"
expect_eq "librdmacm 10.1.0.9 at /run/ibacm.sock: dlid" "$(jq_py "$got" 'j["dlid"]')" "$want"
requests=$(cli p stats --json | python3 -c 'import json,sys; j=json.load(sys.stdin)
print(next(o["acm_requests"] for o in [j, *j.values()] if isinstance(o, dict) and "acm_requests" in o))')
expect_eq "packaged config: ACM requests counted (ib_acme's and librdmacm's at least)" "$((requests >= 2))" 1
stop_ibatd p
expect_eq "ibatd (packaged config) exit code after SIGTERM" "$DAEMON_EXIT" 0
