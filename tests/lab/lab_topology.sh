#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.topology: `ibat-lab topology fattree` reproduces lab/topologies/fattree-32.net byte for
# byte, writes the same with --output, gives usage errors (exit 2) and write errors (exit 1)
# with a message naming the input, and a tree of other numbers comes up in ibsim + OpenSM.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name topo)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
kept=$(dirname "$LAB")/topologies/fattree-32.net
fattree() { "$LAB" topology fattree "$@"; }

fattree --spines 2 --leaves 4 --hosts-per-leaf 8 --thin-every 5 >"$tmp/stdout.net"
cmp "$tmp/stdout.net" "$kept" || fail "generated fattree differs from $kept"
pass "generator output = $kept"
fattree --spines 2 --leaves 4 --hosts-per-leaf 8 --thin-every 5 --output "$tmp/out.net" >"$tmp/none"
cmp "$tmp/out.net" "$kept" || fail "--output file differs from $kept"
[[ ! -s "$tmp/none" ]] || fail "--output also printed to stdout"
pass "--output writes the same bytes, nothing on stdout"

expect_exit 2 "missing --spines" -- fattree --leaves 4 --hosts-per-leaf 8
expect_contains "missing argument message" "$LAST_ERR" "the following arguments are required: --spines"
expect_exit 2 "zero leaves" -- fattree --spines 2 --leaves 0 --hosts-per-leaf 8
expect_contains "zero message" "$LAST_ERR" "argument --leaves: '0' is not a whole number >= 1"
expect_exit 2 "hosts per leaf not a number" -- fattree --spines 2 --leaves 4 --hosts-per-leaf x
expect_contains "not a number message" "$LAST_ERR" "argument --hosts-per-leaf: 'x' is not a whole number >= 1"
expect_exit 2 "negative --thin-every" -- fattree --spines 2 --leaves 4 --hosts-per-leaf 8 --thin-every -1
expect_contains "negative message" "$LAST_ERR" "argument --thin-every: '-1' is not a whole number >= 0"
expect_exit 2 "leaf beyond ibsim's 255 ports" -- fattree --spines 2 --leaves 4 --hosts-per-leaf 252
expect_contains "leaf ports message" "$LAST_ERR" "a leaf would need 256 ports; ibsim allows at most 255"
expect_exit 2 "spine beyond ibsim's 255 ports" -- fattree --spines 2 --leaves 128 --hosts-per-leaf 1
expect_contains "spine ports message" "$LAST_ERR" "use fewer --leaves or --links-per-spine"
expect_exit 2 "unknown shape" -- "$LAB" topology torus
expect_contains "unknown shape message" "$LAST_ERR" "invalid choice: 'torus'"
expect_exit 1 "unwritable --output" -- fattree --spines 1 --leaves 1 --hosts-per-leaf 1 --output "$tmp/no/such/dir.net"
expect_contains "write error message" "$LAST_ERR" "cannot write $tmp/no/such/dir.net"
expect_exit 0 "--help" -- fattree --help
expect_contains "--help text" "$(fattree --help)" "--hosts-per-leaf H"

fattree --spines 1 --leaves 3 --hosts-per-leaf 2 --thin-every 2 --links-per-spine 1 --output "$tmp/small.net"
lab_up "$name" --topology "$tmp/small.net" >/dev/null
nodes=$("$LAB" hosts --name "$name" --json | python3 -c 'import json,sys; print(" ".join(h["node"] for h in json.load(sys.stdin)))')
expect_eq "HCAs of a generated 1x3x2 tree, seen by ibnetdiscover" "$nodes" "h0000 h0001 h0002 h0003 h0004 h0005"
