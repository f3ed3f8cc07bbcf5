#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.hotplug: one ibatd on a 2-HCA host of rails-4x2 picks up and drops CAs while it runs, as a
# driver reload or hot-plug makes them come and go. The umad twin removes and adds a CA through its
# control FIFO (IBAT_TWIN_CONTROL) exactly as the kernel shows it: the CA's sysfs entries go, its
# open umad files read EIO, and the kernel's remove/add uevents reach ibatd's uevent socket.
# Removing mlx5_1: ibat ports lists mlx5_0 alone, a WATCH port_removed event names it, a resolve
# from its source GID is refused and the kernel twin naming it gets F_ERR, while mlx5_0 goes on
# serving fresh SA answers; adding it back: both ports active, mlx5_1's resolves equal saquery
# from that CA again, the kernel's too. Both removed: every resolve fails unreachable (exit 11),
# health exits 18 saying no HCA is present; both back: served again. ibatd never restarts.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
name=$(lab_name e2ehp)
lab_up "$name" --topology "$TOPO/rails-4x2.net" >/dev/null
write_config "$E2E_DIR/d.toml"
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
control=$E2E_DIR/hotplug.fifo
export IBAT_TWIN_CONTROL=$control
start_ibatd "$name" host:g0001 d
unset IBAT_TWIN_CONTROL  # the daemon's alone: saquery and the twin tools must not read it
pid=${DAEMON_PID[d]}

both="mlx5_0:1=active mlx5_1:1=active"
wait_ports d "$both"
sgid() { host "$name" "g0001-mlx5_$1" gid; }
same_as_saquery() {  # same_as_saquery K DEST: a resolve from mlx5_K to DEST equals saquery from that CA
  local s d want got
  s=$(sgid "$1") d=$(host "$name" "$2" gid)
  want=$(saquery_path "$name" "g0001-mlx5_$1" "$s" "$d")
  got=$(cli d resolve --force-sa --sgid "$s" --dgid "$d" --json) || fail "resolve from mlx5_$1 to $2: exit $?"
  python3 - "$want" "$got" <<'PY' || fail "mlx5_$1 -> $2: $got vs saquery $want"
import json, sys
w, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert all(g[k] == w[k] for k in ("dlid", "slid", "sl", "mtu", "rate")), (g, w)
PY
}
kernel_outcome() {  # kernel_outcome K DEST: what the kernel twin naming mlx5_K gets
  jq_py "$("$TWIN" --socket "$E2E_DIR/d.lsa" --device "mlx5_$1" --port 1 --sgid "$(sgid "$1")" \
    "$(host "$name" "$2" gid)")" 'j["outcome"]'
}
same_as_saquery 0 g0002-mlx5_0
same_as_saquery 1 g0003-mlx5_1
pass "two ports active, each CA's resolves equal saquery from it"

cli d watch --json >"$E2E_DIR/watch.jsonl" &
watcher=$!
# the watch is subscribed once it sees a neighbour change made after it started
hw=$(python3 -c 'import ipaddress,sys; b=bytes([0x80,0,0,0x48])+ipaddress.IPv6Address(sys.argv[1]).packed; print(":".join(f"{x:02x}" for x in b))' "$(sgid 0)")
deadline=$((SECONDS + 10))
until grep -q '"neighbour"' "$E2E_DIR/watch.jsonl"; do
  ((SECONDS < deadline)) || fail "ibat watch sees no neighbour event within 10 s"
  cli d neigh add 10.9.9.9 "$hw" >/dev/null || fail "neigh add: exit $?"
  sleep 0.2
done

twin_control "$control" "remove mlx5_1"
wait_ports d "mlx5_0:1=active"
pass "mlx5_1 removed: ibat ports lists mlx5_0 alone"
expect_exit 15 "resolve from the removed CA's source GID" -- cli d resolve --sgid "$(sgid 1)" --dgid "$(host "$name" g0002-mlx5_1 gid)"
expect_eq "kernel twin naming the removed mlx5_1" "$(kernel_outcome 1 g0002-mlx5_1)" "fallback"
same_as_saquery 0 g0003-mlx5_0
expect_eq "kernel twin naming mlx5_0" "$(kernel_outcome 0 g0000-mlx5_0)" "path"
pass "mlx5_0 goes on serving fresh SA answers"

twin_control "$control" "add mlx5_1"
wait_ports d "$both"
same_as_saquery 1 g0002-mlx5_1
expect_eq "kernel twin naming mlx5_1 again" "$(kernel_outcome 1 g0000-mlx5_1)" "path"
pass "mlx5_1 added back: served again"

twin_control "$control" "remove mlx5_0"
twin_control "$control" "remove mlx5_1"
wait_ports d "none"
expect_exit 11 "resolve with no HCA present" -- cli d resolve --dgid "$(host "$name" g0002-mlx5_0 gid)"
expect_exit 18 "health with no HCA present" -- cli d health
expect_contains "health says why" "$(cli d health)" "no InfiniBand HCA is present"
twin_control "$control" "add mlx5_0"
twin_control "$control" "add mlx5_1"
wait_ports d "$both"
same_as_saquery 0 g0000-mlx5_0
same_as_saquery 1 g0003-mlx5_1
expect_exit 0 "health with both back" -- cli d health
pass "both removed and added back: served again"

kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null || true
python3 - "$E2E_DIR/watch.jsonl" <<'PY' || fail "WATCH events: $(grep -c . "$E2E_DIR/watch.jsonl") lines"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
seen = [(e["event"], e["device"]) for e in events if e.get("event") in ("port_removed", "port_added")]
# the two removes (and the two adds) may come in one re-read of the ports, in either order
assert seen[:2] == [("port_removed", "mlx5_1"), ("port_added", "mlx5_1")], seen
assert sorted(seen[2:4]) == [("port_removed", "mlx5_0"), ("port_removed", "mlx5_1")], seen
assert sorted(seen[4:]) == [("port_added", "mlx5_0"), ("port_added", "mlx5_1")], seen
print("ok: WATCH port_removed/port_added events:", seen)
PY
kill -0 "$pid" || fail "ibatd exited"
expect_contains "the log says the port is gone" "$(cat "$DAEMON_DIR/d.err")" "port mlx5_1:1 is gone"
pass "one ibatd all along"
