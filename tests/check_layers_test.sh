#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# ctest `layers`: ibat-sim reaches nothing of src/ but core/ and the fabric's I/O-free layer, and
# neither includes an I/O or thread header (scripts/check-layers.sh); and the check catches each
# kind of offence, with file:line, in a copy of the sources with offences planted (while a fabric
# file outside the layer may keep its asio); the layer includes all of ibat_fabric_rules.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=$root/scripts/check-layers.sh
fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$root" || fail "the layers are crossed (above)"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
cp -r "$root/sim" "$tmp/sim"
cp -r "$root/src/core" "$root/src/fabric" "$tmp/src/"
"$check" "$tmp" >/dev/null || fail "a clean copy of the sources fails the check"
printf '#include <thread>\n' >>"$tmp/src/fabric/table_join.h"
printf '#include <sys/socket.h>\n' >>"$tmp/src/core/types.h"
printf '#include "mad/mad_header.h"\n' >>"$tmp/sim/report.cpp"
printf '#include <mutex>\n' >>"$tmp/src/fabric/mad_requests.cpp"  # in ibat_fabric_rules; sim/ does not reach it
grep -q 'asio' "$tmp/src/fabric/mad_requester.h" || fail "mad_requester.h no longer includes asio: pick another file outside the layer"
rc=0; err=$("$check" "$tmp" 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc with offences planted, expected 1: $err"
join_line=$(wc -l <"$tmp/src/fabric/table_join.h") types_line=$(wc -l <"$tmp/src/core/types.h")
requests_line=$(wc -l <"$tmp/src/fabric/mad_requests.cpp")
for want in "src/fabric/table_join.h:$join_line: #include <thread>" "src/core/types.h:$types_line: #include <sys/socket.h>" \
            "sim/report.cpp: reaches src/mad/mad_header.h" "src/fabric/mad_requests.cpp:$requests_line: #include <mutex>"; do
  [[ $err == *"$want"* ]] || fail "'$want' not listed in: $err"
done
[[ $err != *mad_requester* ]] || fail "a fabric file outside the I/O-free layer was listed: $err"
echo "ok: a thread header in the layer (in a header sim/ reaches, and in the I/O-free library's MadRequests, which it does not), a socket header in core/ and sim/ reaching mad/ are each listed, exit 1"

rc=0; "$check" "$tmp/nowhere" >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "exit $rc on a folder without the sources, expected 2"
echo "ok: a folder without sim/ and src/ gives exit 2"
