#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.faults: link down/up removes and restores a host, loss is accepted, freeze stalls MADs.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name flt)
lab_up "$name" --topology "$TOPO/small-2sw4hca.net" >/dev/null
nodes() { "$LAB" hosts --name "$name" --json | python3 -c 'import json,sys; print(" ".join(h["node"] for h in json.load(sys.stdin)))'; }

expect_eq "hosts before" "$(nodes)" "Hca1 Hca2 Hca3 Hca4"
"$LAB" link --name "$name" down 'Hca4[1]' >/dev/null
expect_eq "hosts with Hca4 unlinked" "$(nodes)" "Hca1 Hca2 Hca3"
"$LAB" link --name "$name" up 'Hca4[1]' >/dev/null
expect_eq "hosts after relink" "$(nodes)" "Hca1 Hca2 Hca3 Hca4"

"$LAB" loss --name "$name" 'Hca4[1]' 30 >/dev/null
"$LAB" loss --name "$name" 'Hca4[1]' 0 >/dev/null
pass "loss set and cleared"

start=$(date +%s%N)
"$LAB" freeze --name "$name" 2 >/dev/null
"$LAB" run --name "$name" --node Hca3 -- sminfo >/dev/null
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
(( elapsed_ms >= 1500 )) || fail "sminfo answered after ${elapsed_ms} ms during a 2 s freeze"
pass "sminfo waited ${elapsed_ms} ms for a 2 s freeze"
