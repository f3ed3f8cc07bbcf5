#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.multi_rail: one ibatd serves all four HCAs of a host of a rail-optimized tree (4 hosts x 4
# rails, the umad twin giving the process every CA of the host). `ibat ports` lists four active
# ports; for each CA, resolves with its source GID equal saquery run from that CA, to the same
# rail's leaf, the rail's other leaf and another rail; the kernel twin naming each device/port gets
# that port's answer (an unknown device: F_ERR at once); ib_acme by source GID, an unknown source
# GID refused; `ibat health` is 0. Unlinking one HCA's cable: its requests fail `unreachable`
# (kernel: F_ERR) and `health` names it, the other three serve every destination with 0 failures;
# after the relink it serves again. Idle, each port sends at most 2 remote MADs in 120 s.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
TWIN=${KERNEL_TWIN:-$BIN/ibat-kernel-twin}
[[ -x $TWIN ]] || fail "ibat-kernel-twin not built at $TWIN (build target ibat-kernel-twin)"
ACME=$(command -v ib_acme) || fail "ib_acme not installed (Debian package ibacm)"
name=$(lab_name e2emr)
topo=$E2E_DIR/rails-4x4.net
"$LAB" topology rails --hosts 4 --rails 4 --hosts-per-leaf 2 --spines 2 --output "$topo"
lab_up "$name" --topology "$topo" >/dev/null
write_config "$E2E_DIR/d.toml"
printf '[linux]\nlocal_sa_socket = "%s"\n' "$E2E_DIR/d.lsa" >>"$E2E_DIR/d.toml"
acm=$E2E_DIR/acm.sock
start_ibatd "$name" host:g0001 d --acm-socket "$acm"

all_active="mlx5_0:1=active mlx5_1:1=active mlx5_2:1=active mlx5_3:1=active"
deadline=$((SECONDS + 30))
until [[ $(ports_state d) == "$all_active" ]]; do
  ((SECONDS < deadline)) || fail "ibat ports after 30 s: $(ports_state d); $(tail -5 "$DAEMON_DIR/d.err")"
  sleep 0.2
done
pass "ibat ports: four active ports ($all_active)"
expect_contains "ports (table)" "$(cli d ports)" "mlx5_3:1"
expect_exit 0 "health with every port up" -- cli d health

sgid() { host "$name" "g0001-mlx5_$1" gid; }
# the destinations of CA k: same leaf (g0000), the rail's other leaf (g0003), another rail (g0002)
dests_of() { echo "g0000-mlx5_$1 g0003-mlx5_$1 g0002-mlx5_$((($1 + 1) % 4))"; }
same_path() {  # same_path WANT GOT: saquery's and ibat's JSON agree on what a packet carries
  python3 - "$1" "$2" <<'PY'
import json, sys
w, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
diff = {k: (g[k], w[k]) for k in ("dlid", "slid", "sl", "mtu", "rate") if g[k] != w[k]}
assert not diff, f"(ibat, saquery) differ: {diff}"
PY
}

for k in 0 1 2 3; do
  s=$(sgid $k)
  for dest in $(dests_of $k); do
    d=$(host "$name" "$dest" gid)
    want=$(saquery_path "$name" "g0001-mlx5_$k" "$s" "$d")
    got=$(cli d resolve --sgid "$s" --dgid "$d" --json) || fail "resolve from mlx5_$k to $dest: exit $?"
    same_path "$want" "$got" || fail "mlx5_$k -> $dest: $got vs saquery $want"
  done
done
pass "four CAs x three destinations (same leaf, other leaf, other rail) equal saquery from that CA"
expect_exit 15 "a source GID no port has" -- cli d resolve --sgid fe80::dead:beef --dgid "$(host "$name" g0000-mlx5_0 gid)"

# the kernel: each device/port gets its own port's answer; an unknown device F_ERR
for k in 0 1 2 3; do
  s=$(sgid $k)
  d=$(host "$name" "g0003-mlx5_$k" gid)
  line=$("$TWIN" --socket "$E2E_DIR/d.lsa" --device "mlx5_$k" --port 1 --sgid "$s" "$d") || fail "twin mlx5_$k: exit $?"
  want=$(saquery_path "$name" "g0001-mlx5_$k" "$s" "$d")
  python3 - "$line" "$want" <<'PY' || fail "kernel twin on mlx5_$k: $line vs saquery $want"
import json, sys
g, w = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert g["outcome"] == "path" and g["dlid"] == w["dlid"] and g["slid"] == w["slid"], (g, w)
PY
done
pass "kernel twin: each of mlx5_0..3 port 1 gets its port's path (SLID of that CA)"
line=$("$TWIN" --socket "$E2E_DIR/d.lsa" --device mlx5_9 --port 1 --sgid "$(sgid 0)" "$(host "$name" g0000-mlx5_0 gid)")
expect_eq "kernel twin naming mlx5_9 (not on this host)" "$(jq_py "$line" 'j["outcome"]')" "fallback"

# ACM: by source GID, as ibacm picks its endpoint; an unknown source GID is refused
for k in 1 3; do
  d=$(host "$name" "g0002-mlx5_$k" gid)
  want=$(jq_py "$(saquery_path "$name" "g0001-mlx5_$k" "$(sgid $k)" "$d")" 'j["dlid"]')
  out=$("$ACME" -S "$acm" -f g -s "$(sgid $k)" -d "$d") || fail "ib_acme from mlx5_$k: exit $?: $out"
  expect_eq "ib_acme -s (mlx5_$k) -d g0002-mlx5_$k: dlid" "$(sed -n 's/^  dlid: \([0-9]*\)$/\1/p' <<<"$out")" "$want"
done
out=$("$ACME" -S "$acm" -f g -s fe80::dead:beef -d "$(host "$name" g0002-mlx5_1 gid)" 2>&1) || true
[[ $out != *"return status 0x0"* ]] || fail "ib_acme with an unknown source GID succeeded: $out"
pass "ib_acme with a source GID no port has is refused"

# flush --port drops that port's paths only
before=$(jq_py "$(cli d ports --json)" '{p["name"]: p["entries"] for p in j}')
expect_contains "flush --port mlx5_1:1" "$(cli d flush --port mlx5_1:1)" "from mlx5_1:1"
python3 - "$before" "$(jq_py "$(cli d ports --json)" '{p["name"]: p["entries"] for p in j}')" <<'PY' || fail "flush --port: before $before"
import ast, sys
before, after = (ast.literal_eval(a) for a in sys.argv[1:3])
assert after["mlx5_1:1"] == 0 and before["mlx5_1:1"] > 0, (before, after)
assert all(after[k] == v for k, v in before.items() if k != "mlx5_1:1"), (before, after)
PY
pass "flush --port mlx5_1:1 dropped its paths, the other ports kept theirs"
expect_exit 2 "flush --port of a port ibatd does not serve" -- cli d flush --port mlx5_9:1

# idle: each of the four ports sends its SM/SA no more than one port alone does (e2e.quiet: <= 2
# remote MADs in 120 s); the counters are the evidence, so the window is waited out
remote_mads() { jq_py "$(cli d ports --json)" '" ".join(str(p["fabric"]["remote_mads_sent"]) for p in sorted(j, key=lambda p: p["name"]))'; }
settled=$(remote_mads)
until [[ $settled == "$(remote_mads)" ]]; do sleep 1; settled=$(remote_mads); done
sleep 120
python3 - "$settled" "$(remote_mads)" <<'PY' || fail "idle remote MADs per port over 120 s: before $settled, after $(remote_mads)"
import sys
before, after = (list(map(int, a.split())) for a in sys.argv[1:3])
sent = [a - b for a, b in zip(after, before)]
assert len(sent) == 4 and all(n <= 2 for n in sent), sent
print("ok: idle 120 s, remote MADs per port:", sent)
PY

# unlink mlx5_2's cable: its requests fail, the other three serve everything
"$LAB" link --name "$name" down "g0001-mlx5_2[1]" >/dev/null
deadline=$((SECONDS + 20))
until [[ $(ports_state d) == *"mlx5_2:1=link_down"* ]]; do
  ((SECONDS < deadline)) || fail "mlx5_2 not seen down after 20 s: $(ports_state d)"
  sleep 0.2
done
pass "ibat ports: mlx5_2:1 link_down"
d2=$(host "$name" g0003-mlx5_2 gid)
expect_exit 11 "resolve from the unlinked mlx5_2" -- cli d resolve --sgid "$(sgid 2)" --dgid "$d2"
line=$("$TWIN" --socket "$E2E_DIR/d.lsa" --device mlx5_2 --port 1 --sgid "$(sgid 2)" "$d2")
expect_eq "kernel twin on the unlinked mlx5_2" "$(jq_py "$line" 'j["outcome"]')" "fallback"
expect_exit 18 "health with mlx5_2 unlinked" -- cli d health
expect_contains "health names the port" "$(cli d health)" "mlx5_2:1: link down"
failures=0
for k in 0 1 3; do
  for dest in $(dests_of $k); do
    cli d resolve --force-sa --sgid "$(sgid $k)" --dgid "$(host "$name" "$dest" gid)" >/dev/null || failures=$((failures + 1))
  done
done
expect_eq "failures on the three other ports while mlx5_2 is unlinked (fresh SA answers)" "$failures" 0

"$LAB" link --name "$name" up "g0001-mlx5_2[1]" >/dev/null
deadline=$((SECONDS + 60))
until cli d resolve --sgid "$(sgid 2)" --dgid "$d2" --timeout 2000 >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "mlx5_2 does not serve 60 s after the relink: $(ports_state d)"
  sleep 0.2
done
pass "mlx5_2 serves again after the relink"
expect_eq "ports after the relink" "$(ports_state d)" "$all_active"
stop_ibatd d
expect_eq "ibatd exit after SIGTERM" "$DAEMON_EXIT" 0
