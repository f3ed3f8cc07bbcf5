#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.errors: each error case of ibat-lab exits with its documented code and a useful message.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name err)
small=$TOPO/small-2sw4hca.net
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
LAB_FABRICS+=("$name")  # failed ups below keep their folder for the logs

expect_exit 3 "hosts on an unknown name" -- "$LAB" hosts --name "nosuch-$$"
expect_contains "unknown name message" "$LAST_ERR" "ibat-lab up --name nosuch-$$"
expect_exit 3 "down of an unknown name" -- "$LAB" down --name "nosuch-$$"
expect_exit 3 "run on an unknown name" -- "$LAB" run --name "nosuch-$$" --node Hca1 -- true
expect_exit 2 "bad fabric name" -- "$LAB" hosts --name "../etc"
expect_contains "run --help explains its command argument" "$("$LAB" run --help)" "the command to run attached to NODE"

expect_exit 6 "missing topology file" -- "$LAB" up --name "$name" --topology "$tmp/none.net"
printf 'this is not a topology\n' >"$tmp/garbage.net"
expect_exit 6 "topology without nodes" -- "$LAB" up --name "$name" --topology "$tmp/garbage.net"
printf 'Switch 4 "sw"\n[1] "ghost"[1]\n' >"$tmp/dangling.net"
expect_exit 6 "topology ibsim rejects" -- "$LAB" up --name "$name" --topology "$tmp/dangling.net"
expect_exit 5 "unknown --sm-node" -- "$LAB" up --name "$name" --topology "$small" --sm-node Hca9
expect_contains "unknown node message lists ids" "$LAST_ERR" "Hca1"
[[ $LAST_ERR != *Switch* ]] || fail "the unknown-node hint offers a switch: $LAST_ERR"
pass "the unknown-node hint offers HCAs only"
expect_exit 2 "standby on the master's node" -- \
  "$LAB" up --name "$name" --topology "$small" --sm-node Hca1 --standby-sm Hca1

IBAT_LAB_KERNEL=umad2sim IBAT_LAB_UMAD2SIM=$tmp/libumad2sim.so IBAT_LAB_NO_INSTALL=1 \
  expect_exit 7 "missing package" -- "$LAB" up --name "$name" --topology "$small"
expect_contains "missing package message" "$LAST_ERR" "apt-get install -y libumad2sim0"

expect_exit 8 "OpenSM not up within the timeout" -- \
  "$LAB" up --name "$name" --topology "$small" --timeout 0.000001  # shorter than any start
expect_contains "timeout message shows the OpenSM log" "$LAST_ERR" "OpenSM 3."

lab_up "$name" --topology "$small" >/dev/null
pass "up works after a failed up of the same name"
expect_exit 4 "name already up" -- "$LAB" up --name "$name" --topology "$small"
expect_exit 4 "sm start while it runs" -- "$LAB" sm --name "$name" start
expect_exit 5 "run on an unknown node" -- "$LAB" run --name "$name" --node Hca9 -- true
expect_exit 5 "link down of an unknown node" -- "$LAB" link --name "$name" down 'Hca9[1]'
expect_exit 5 "loss on an unknown node" -- "$LAB" loss --name "$name" Hca9 10
expect_exit 2 "loss above 100 %" -- "$LAB" loss --name "$name" Hca1 101
expect_exit 2 "failover without a standby" -- "$LAB" sm --name "$name" failover
expect_exit 42 "run returns the command's exit code" -- "$LAB" run --name "$name" --node Hca2 -- sh -c 'exit 42'
expect_exit 0 "env for a node" -- "$LAB" env --name "$name" --node Hca2
expect_contains "env lines" "$("$LAB" env --name "$name" --node Hca2)" "export SIM_HOST=Hca2"
