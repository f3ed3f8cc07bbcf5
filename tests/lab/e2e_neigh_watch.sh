#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.neigh_watch: `ibat neigh replay` of a pcap whose ARP senders are real hosts of the lab fabric
# (neigh list shows exactly those IP -> hw entries, resolve --ip gives the host's LID; a corrupt
# pcap fails naming the file and adds nothing), and `ibat watch --json` seeing the events of a
# neighbour change, an `ibat flush` and an SM restart (`ibat-lab sm restart` -> sm_change).
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2enw)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
# The daemon idles at the SM restart: the HCA's CLIENT_REREGISTER tells it (docs/fabric.md), or,
# were events missing, its routine SM/SA check, here every 1-1.5 s instead of 60-90 s.
write_config "$E2E_DIR/d.toml"
sed -i 's/^\[fabric\]$/[fabric]\nsm_check_interval_s = 1/' "$E2E_DIR/d.toml"
start_ibatd "$name" h0001 d
wait_resolving d "$(host "$name" h0010 gid)"

# write_arp_pcap FILE IP=GID...: a Linux cooked capture (what tcpdump -i ib0 writes) of IPoIB ARP
# replies, one per IP, sender HW = flags 0x80, QPN 0x000048, GID
write_arp_pcap() {
  python3 - "$@" <<'PY'
import ipaddress, struct, sys
out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 113)  # LINKTYPE_LINUX_SLL
for i, pair in enumerate(sys.argv[2:]):
    ip, gid = pair.split("=")
    hw = bytes([0x80, 0x00, 0x00, 0x48]) + ipaddress.IPv6Address(gid).packed
    arp = struct.pack(">HHBBH", 32, 0x0800, 20, 4, 2) + hw + ipaddress.IPv4Address(ip).packed \
        + bytes(20) + ipaddress.IPv4Address("10.1.0.1").packed
    frame = struct.pack(">HHH", 0, 32, 20) + hw[:8] + struct.pack(">H", 0x0806) + arp
    out += struct.pack("<IIII", 1_700_000_000 + i, 0, len(frame), len(frame)) + frame
open(sys.argv[1], "wb").write(out)
PY
}
# hw_of GID: the IPoIB hardware address string the capture carries for GID (as `neigh list` prints it)
hw_of() {
  python3 -c 'import ipaddress,sys; b=bytes([0x80,0,0,0x48])+ipaddress.IPv6Address(sys.argv[1]).packed; print(":".join(f"{x:02x}" for x in b))' "$1"
}

# 1. replay a capture of ARP replies from h0003 and h0004
gid3=$(host "$name" h0003 gid) gid4=$(host "$name" h0004 gid)
write_arp_pcap "$E2E_DIR/arp.pcap" "10.1.0.3=$gid3" "10.1.0.4=$gid4"
out=$(cli d neigh replay "$E2E_DIR/arp.pcap") || fail "neigh replay: exit $?"
expect_contains "neigh replay output" "$out" "replayed 2 ARP packets"
want="[('10.1.0.3', '$(hw_of "$gid3")'), ('10.1.0.4', '$(hw_of "$gid4")')]"
neigh_entries() { jq_py "$(cli d neigh list --json)" 'sorted((n["ip"], n["hw"]) for n in j)'; }
expect_eq "neigh list --json after replay" "$(neigh_entries)" "$want"

for n in 3 4; do
  out=$(cli d resolve --ip 10.1.0.$n --json) || fail "resolve --ip 10.1.0.$n: exit $?"
  expect_eq "resolve --ip 10.1.0.$n DLID (h000$n)" "$(jq_py "$out" 'j["dlid"]')" "$(host "$name" h000$n lid)"
  expect_eq "resolve --ip 10.1.0.$n DGID (h000$n)" "$(jq_py "$out" 'j["dgid"]')" "$(host "$name" h000$n gid)"
done

# corrupt captures of ARP replies from h0005 and h0006 (bad magic; second record cut short): each
# fails naming the file and adds nothing, not even the first, intact record
write_arp_pcap "$E2E_DIR/bad-magic.pcap" "10.1.0.5=$(host "$name" h0005 gid)" "10.1.0.6=$(host "$name" h0006 gid)"
cp "$E2E_DIR/bad-magic.pcap" "$E2E_DIR/truncated.pcap"
printf '\xde\xad\xbe\xef' | dd of="$E2E_DIR/bad-magic.pcap" conv=notrunc status=none
truncate -s -20 "$E2E_DIR/truncated.pcap"
for corrupt in bad-magic truncated; do
  expect_exit 1 "neigh replay of a corrupt pcap ($corrupt)" -- cli d neigh replay "$E2E_DIR/$corrupt.pcap"
  expect_contains "corrupt pcap message ($corrupt)" "$LAST_ERR" "$E2E_DIR/$corrupt.pcap"
  expect_eq "neigh list --json after the $corrupt replay" "$(neigh_entries)" "$want"
done

# 2. watch --json in the background, into a file
events=$E2E_DIR/watch.jsonl
"$IBAT_CLI" --socket "$(sock d)" watch --json >"$events" 2>"$E2E_DIR/watch.err" &
watch_pid=$!
on_exit 'kill -TERM "$watch_pid" 2>/dev/null || true'

# count_events NAME [FIELD=VALUE]: lines of the watch file with event NAME (and FIELD == VALUE;
# VALUE None: FIELD absent)
count_events() {
  python3 - "$events" "$@" <<'PY'
import json, sys
want, extra = sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
n = 0
for line in open(sys.argv[1]):
    if not line.endswith("\n"):
        continue  # still being written
    e = json.loads(line)
    n += e.get("event") == want and all(str(e.get(k)) == v for k, v in extra.items())
print(n)
PY
}
# wait_event WHAT TIMEOUT_S NAME [FIELD=VALUE]: polls the watch file until such an event is there
wait_event() {
  local what=$1 timeout=$2 deadline; shift 2
  deadline=$((SECONDS + timeout))
  until (($(count_events "$@") > 0)); do
    kill -0 "$watch_pid" 2>/dev/null || fail "$what: ibat watch exited: $(cat "$E2E_DIR/watch.err")"
    ((SECONDS < deadline)) || fail "$what: no '$*' event within $timeout s; seen: $(cat "$events")"
    sleep 0.1
  done
  pass "$what: watch saw '$*'"
}

# the watch is subscribed once it sees a neighbour change made after it started
deadline=$((SECONDS + 10))
until (($(count_events neighbour action=add ip=10.9.9.9) > 0)); do
  kill -0 "$watch_pid" 2>/dev/null || fail "ibat watch exited: $(cat "$E2E_DIR/watch.err")"
  ((SECONDS < deadline)) || fail "ibat watch sees no neighbour event within 10 s: $(cat "$events")"
  cli d neigh add 10.9.9.9 "$(hw_of "$gid3")" >/dev/null || fail "neigh add 10.9.9.9: exit $?"
  sleep 0.2
done
pass "watch subscribed (sees neigh add)"
cli d neigh del 10.9.9.9 || fail "neigh del 10.9.9.9: exit $?"
wait_event "neigh del" 10 neighbour action=del ip=10.9.9.9

cli d flush --dgid "$gid3" >/dev/null || fail "flush --dgid: exit $?"
wait_event "flush --dgid" 10 flush dgid="$gid3"
cli d flush >/dev/null || fail "flush: exit $?"
wait_event "flush (all)" 10 flush dgid=None
expect_eq "flush events (one --dgid, one all)" "$(count_events flush)" 2

expect_eq "sm_change events before the SM restart" "$(count_events sm_change)" 0
"$LAB" sm --name "$name" restart >/dev/null
wait_event "ibat-lab sm restart" 30 sm_change
expect_eq "sm_changes in stats" "$(jq_py "$(cli d stats --json)" 'j["sm_changes"] >= 1')" True

kill -TERM "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
