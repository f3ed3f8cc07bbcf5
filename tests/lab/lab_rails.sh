#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.rails: `ibat-lab topology rails` reproduces lab/topologies/rails-4x2.net byte for byte,
# writes the same with --output, cables a rail-optimized fat tree (names, NodeDescriptions, port
# counts, both ends of every link, thin hosts), gives usage errors (exit 2) naming the input; and
# rails-4x2.net comes up (under libumad2sim for now), `hosts` naming each HCA's host and CA,
# `run`/`env` refusing an unknown --host (exit 5) and --node with --host (exit 2).
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name rails)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
kept=$TOPO/rails-4x2.net
rails() { "$LAB" topology rails "$@"; }

rails --hosts 4 --rails 2 --hosts-per-leaf 2 --spines 2 >"$tmp/stdout.net"
cmp "$tmp/stdout.net" "$kept" || fail "generated rails differs from $kept"
pass "generator output = $kept"
rails --hosts 4 --rails 2 --hosts-per-leaf 2 --spines 2 --output "$tmp/out.net" >"$tmp/none"
cmp "$tmp/out.net" "$kept" || fail "--output file differs from $kept"
[[ ! -s "$tmp/none" ]] || fail "--output also printed to stdout"
pass "--output writes the same bytes, nothing on stdout"

# 5 hosts (the last leaf of each rail half full), 3 rails, 2 spines x 2 links, every 2nd host thin
rails --hosts 5 --rails 3 --hosts-per-leaf 2 --spines 2 --links-per-spine 2 --thin-every 2 >"$tmp/r.net"
python3 - "$tmp/r.net" <<'EOF'
import re, sys
nodes, links, descs, order = {}, {}, {}, []
current = None
for line in open(sys.argv[1]):
    m = re.match(r'^(Switch|Hca)\t(\d+) "([^"]+)"(?: # "([^"]*)")?$', line.rstrip("\n"))
    if m:
        kind, ports, current, desc = m.groups()
        nodes[current] = (kind, int(ports)); order.append(current)
        if desc is not None:
            descs[current] = desc
        continue
    m = re.match(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\](\tw=1)?$', line.rstrip("\n"))
    if m:
        port, peer, peer_port, thin = m.groups()
        key = (current, int(port))
        assert key not in links, f"port used twice: {key}"
        links[key] = (peer, int(peer_port), bool(thin))
        continue
    assert line.strip() == "", f"unexpected line {line!r}"
spines = ["spine0", "spine1"]
leaves = [f"r{k}l{j}" for k in range(3) for j in range(3)]
hcas = [f"g{i:04d}-mlx5_{k}" for i in range(5) for k in range(3)]
assert order == spines + leaves + hcas, f"node order {order}"
for s in spines:
    assert nodes[s] == ("Switch", 3 * 3 * 2), (s, nodes[s])
for leaf in leaves:
    assert nodes[leaf] == ("Switch", 2 + 2 * 2), (leaf, nodes[leaf])
for (node, port), (peer, peer_port, thin) in links.items():
    assert 1 <= port <= nodes[node][1], f"{node} port {port} beyond its count"
    assert links.get((peer, peer_port)) == (node, port, thin), f"no matching end for {node}[{port}]"
for i in range(5):
    for k in range(3):
        hca = f"g{i:04d}-mlx5_{k}"
        assert nodes[hca] == ("Hca", 1) and descs[hca] == f"g{i:04d} mlx5_{k}", hca
        assert links[(hca, 1)] == (f"r{k}l{i // 2}", i % 2 + 1, i % 2 == 1), (hca, links[(hca, 1)])
assert not any(n in descs for n in spines + leaves), "a switch got a NodeDescription"
assert (f"r0l2", 2) not in links, "the half-full leaf cables a sixth host"
for s, spine in enumerate(spines):
    ends = sorted((peer, peer_port) for (n, _), (peer, peer_port, _) in links.items() if n == spine)
    assert ends == sorted((leaf, 2 + s * 2 + k + 1) for leaf in leaves for k in range(2)), ends
EOF
pass "5 hosts x 3 rails: names, NodeDescriptions, port counts, both link ends, thin hosts"
expect_eq "host names widen past 10000 hosts" \
  "$(rails --hosts 10001 --rails 1 --hosts-per-leaf 100 --spines 1 | grep -m1 '^Hca')" \
  $'Hca\t1 "g00000-mlx5_0" # "g00000 mlx5_0"'

expect_exit 2 "missing --rails" -- rails --hosts 4 --hosts-per-leaf 2 --spines 2
expect_contains "missing argument message" "$LAST_ERR" "the following arguments are required: --rails"
expect_exit 2 "zero hosts" -- rails --hosts 0 --rails 2 --hosts-per-leaf 2 --spines 2
expect_contains "zero message" "$LAST_ERR" "argument --hosts: '0' is not a whole number >= 1"
expect_exit 2 "spines not a number" -- rails --hosts 4 --rails 2 --hosts-per-leaf 2 --spines x
expect_contains "not a number message" "$LAST_ERR" "argument --spines: 'x' is not a whole number >= 1"
expect_exit 2 "negative --thin-every" -- rails --hosts 4 --rails 2 --hosts-per-leaf 2 --spines 2 --thin-every -1
expect_contains "negative message" "$LAST_ERR" "argument --thin-every: '-1' is not a whole number >= 0"
expect_exit 2 "leaf beyond ibsim's 255 ports" -- rails --hosts 4 --rails 2 --hosts-per-leaf 254 --spines 2
expect_contains "leaf ports message" "$LAST_ERR" "a leaf would need 256 ports; ibsim allows at most 255"
expect_exit 2 "spine beyond ibsim's 255 ports" -- rails --hosts 256 --rails 2 --hosts-per-leaf 2 --spines 1
expect_contains "spine ports message" "$LAST_ERR" "a spine would need 256 ports (2 rails x 128 leaves x 1 links)"
expect_contains "spine ports advice" "$LAST_ERR" "use fewer --rails, --hosts or --links-per-spine, or more --hosts-per-leaf"
expect_exit 1 "unwritable --output" -- rails --hosts 1 --rails 1 --hosts-per-leaf 1 --spines 1 --output "$tmp/no/such/dir.net"
expect_contains "write error message" "$LAST_ERR" "cannot write $tmp/no/such/dir.net"
expect_contains "--help text" "$(rails --help)" "--hosts-per-leaf P"
expect_contains "ibat-lab --help explains hosts" "$("$LAB" --help)" "--also storage:gpu03-mlx5_4"

# rails-4x2 on the fabric (libumad2sim: one CA per process)
LAB_FABRICS+=("$name")  # lab_up in $(...) registers it in a subshell only
out=$(IBAT_LAB_KERNEL=umad2sim lab_up "$name" --topology "$kept")
expect_contains "up output" "$out" "SUBNET UP"
"$LAB" hosts --name "$name" --json | python3 -c '
import json, sys
hosts = json.load(sys.stdin)
want = [(f"g{i:04d}-mlx5_{k}", f"g{i:04d}", f"mlx5_{k}") for i in range(4) for k in range(2)]
assert [(h["node"], h["host"], h["ca"]) for h in hosts] == want, hosts
assert len({h["lid"] for h in hosts}) == 8 and all(h["port"] == 1 for h in hosts), hosts
assert all(set(h) == {"node", "port", "guid", "gid", "lid", "host", "ca"} for h in hosts), hosts
'
pass "hosts --json: 8 HCA ports, host g0000..g0003, ca mlx5_0/mlx5_1, unique LIDs"
table=$("$LAB" hosts --name "$name")
expect_eq "hosts table lines (header + 8)" "$(wc -l <<<"$table")" 9
expect_eq "hosts table header" "$(head -n1 <<<"$table" | awk '{print $6, $7}')" "HOST CA"
expect_eq "hosts table row" "$(grep '^g0002-mlx5_1 ' <<<"$table" | awk '{print $6, $7}')" "g0002 mlx5_1"
state=${IBAT_LAB_DIR:-/tmp/ibat-lab}/$name/state.json
expect_eq "state.json kernel and description" \
  "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kernel"], s["descriptions"]["g0001-mlx5_1"], s["nodes"]["g0001-mlx5_1"])' "$state")" \
  "umad2sim g0001 mlx5_1 Hca"
expect_eq "status --json kernel" \
  "$("$LAB" status --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"])')" umad2sim
expect_eq "SM state seen from g0003-mlx5_1" "$(sminfo_state "$name" g0003-mlx5_1)" SMINFO_MASTER
env_node=$("$LAB" env --name "$name" --node g0001-mlx5_1)
expect_contains "env --node under umad2sim" "$env_node" "export SIM_HOST=g0001-mlx5_1"
[[ $env_node != *IBAT_TWIN* ]] || fail "umad2sim env carries twin variables: $env_node"
pass "umad2sim env has no IBAT_TWIN_* variables"

expect_exit 5 "run on an unknown host" -- "$LAB" run --name "$name" --host g0009 -- true
expect_contains "unknown host message" "$LAST_ERR" "unknown host 'g0009' in fabric '$name'"
expect_contains "unknown host message lists hosts" "$LAST_ERR" "e.g. g0000, g0001, g0002, g0003"
expect_exit 5 "env on an unknown host" -- "$LAB" env --name "$name" --host g0009
expect_exit 5 "a node id given as --host" -- "$LAB" run --name "$name" --host g0001-mlx5_0 -- true
expect_contains "node-as-host hint" "$LAST_ERR" "use --node g0001-mlx5_0"
expect_exit 2 "run with both --node and --host" -- "$LAB" run --name "$name" --node g0000-mlx5_0 --host g0000 -- true
expect_contains "both message" "$LAST_ERR" "not allowed with argument"
expect_exit 2 "env with both --node and --host" -- "$LAB" env --name "$name" --host g0000 --node g0000-mlx5_0
expect_exit 2 "run with neither --node nor --host" -- "$LAB" run --name "$name" -- true
expect_contains "neither message" "$LAST_ERR" "one of the arguments --node --host is required"
expect_exit 2 "--host with two HCAs under libumad2sim" -- "$LAB" run --name "$name" --host g0001 -- true
expect_contains "one-CA message" "$LAST_ERR" "runs under libumad2sim (IBAT_LAB_KERNEL=umad2sim at up), which attaches a process to one CA"
expect_exit 3 "--host on an unknown fabric" -- "$LAB" run --name "nosuch-$$" --host g0000 -- true
