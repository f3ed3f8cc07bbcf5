#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.libibat: the C program e2e_libibat_client (linking libibat) against a real ibatd on the lab:
# synchronous and pipelined asynchronous resolves, DLIDs compared with saquery's.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
CLIENT=${E2E_LIBIBAT_CLIENT:?set by ctest: path of e2e_libibat_client}
name=$(lab_name e2elib)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0006
sgid=$(host "$name" $src gid)
start_ibatd "$name" $src d

args=()
for dest in h0000 h0007 h0012 h0019 h0026 h0031; do
  dgid=$(host "$name" $dest gid)
  dlid=$(jq_py "$(saquery_path "$name" $src "$sgid" "$dgid")" 'j["dlid"]')
  args+=("$dgid=$dlid")
done
wait_resolving d "$(host "$name" h0000 gid)"
"$CLIENT" "$(sock d)" "fe80::10:dead" "${args[@]}" || fail "e2e_libibat_client failed (exit $?)"
pass "libibat sync + async resolves against ibatd"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
