#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.quiet_log: a lab ibatd's stderr holds only ibatd's own lines: after resolves (each a MAD
# through umad2sim), no "ERR: received data size ... larger than requested buf size" from the
# simulated HCA, and no sanitizer report.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2equiet)
lab_up "$name" --topology "$TOPO/small-2sw4hca.net" >/dev/null
start_ibatd "$name" Hca1 d
for node in Hca2 Hca3 Hca4; do
  dgid=$(host "$name" $node gid)
  wait_resolving d "$dgid"
  cli d resolve --dgid "$dgid" --force-sa >/dev/null || fail "resolve $node with --force-sa"
done
stats=$(cli d stats --json)
received=$(jq_py "$stats" 'j["fabric"]["mads_received"]')
((received > 0)) || fail "ibatd received no MADs: $stats"
stop_ibatd d
expect_eq "ibatd exit code" "$DAEMON_EXIT" 0
if grep -E 'received data size|ERROR: AddressSanitizer|runtime error:' "$E2E_DIR/d.err" >&2; then
  fail "ibatd's stderr has lines that are not ibatd's (above)"
fi
pass "ibatd's stderr has no umad2sim complaint after $received MADs received"
