#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.two_fabrics: two fabrics run at once, isolated by name (IBSIM_SOCKNAME, folders).
source "$(dirname "$0")/lab_lib.sh"
big=$(lab_name two-a)
small=$(lab_name two-b)
lab_up "$big" --topology "$TOPO/fattree-32.net" >/dev/null
lab_up "$small" --topology "$TOPO/small-2sw4hca.net" >/dev/null

count() { "$LAB" hosts --name "$1" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
expect_eq "hosts of $big" "$(count "$big")" 32
expect_eq "hosts of $small" "$(count "$small")" 4
expect_exit 5 "a node of one fabric is unknown in the other" -- "$LAB" run --name "$small" --node h0001 -- true

"$LAB" down --name "$small" >/dev/null
expect_eq "hosts of $big after the other is down" "$(count "$big")" 32
expect_eq "SM of $big" "$(sminfo_state "$big" h0001)" SMINFO_MASTER
