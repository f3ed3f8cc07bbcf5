#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.snapshot: a corrupt warm-cache snapshot at start (one byte flipped, truncated, a foreign file)
# is reported in ibatd's log, ignored (no path loaded), and the daemon serves resolves anyway.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2esnap)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
node=h0008
dests=(h0002 h0016 h0029)

# No prefetch: what a daemon holds at start is what its snapshot gave it.
for tag in good flipped truncated foreign again; do write_config "$E2E_DIR/$tag.toml" 'prefetch = "off"'; done

# A good snapshot first: three paths, written at shutdown.
start_ibatd "$name" $node good
for dest in "${dests[@]}"; do wait_resolving good "$(host "$name" $dest gid)"; done
stop_ibatd good
[[ -s $E2E_DIR/good.cache ]] || fail "no snapshot written at shutdown"

# corrupt KIND FILE: writes a damaged copy of good.cache to FILE
corrupt() {
  python3 - "$1" "$E2E_DIR/good.cache" "$2" <<'PY'
import sys
kind, src, dst = sys.argv[1:]
data = bytearray(open(src, "rb").read())
if kind == "flipped":
    data[len(data) // 2] ^= 0x40
elif kind == "truncated":
    data = data[: len(data) - 7]
else:  # foreign
    data = b"# not a snapshot\n" * 20
open(dst, "wb").write(data)
PY
}

# kind -> what the log must say
declare -A REPORT=([flipped]="checksum mismatch" [truncated]="entries need" [foreign]="not an ibat snapshot")
for kind in flipped truncated foreign; do
  corrupt $kind "$E2E_DIR/$kind.cache"
  start_ibatd "$name" $node $kind
  log=$(cat "$E2E_DIR/$kind.err")
  expect_contains "$kind snapshot: ibatd log" "$log" "warm cache ignored"
  expect_contains "$kind snapshot: reason" "$log" "${REPORT[$kind]}"
  expect_eq "$kind snapshot: paths loaded" "$(jq_py "$(cli $kind paths --json)" 'len(j)')" 0
  dgid=$(host "$name" ${dests[1]} gid)
  wait_resolving $kind "$dgid"
  out=$(cli $kind resolve --dgid "$dgid" --json) || fail "$kind snapshot: resolve failed: exit $?"
  expect_eq "$kind snapshot: ibatd serves, DLID of ${dests[1]}" "$(jq_py "$out" 'j["dlid"]')" "$(host "$name" ${dests[1]} lid)"
  stop_ibatd $kind
  expect_eq "$kind snapshot: ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
done

# The good one still loads (the checks above are not passing because nothing loads at all).
cp "$E2E_DIR/good.cache" "$E2E_DIR/again.cache"
start_ibatd "$name" $node again
expect_contains "intact snapshot: ibatd log" "$(cat "$E2E_DIR/again.err")" "warm cache: ${#dests[@]} paths loaded"
expect_eq "intact snapshot: paths loaded" "$(jq_py "$(cli again paths --json)" 'len(j)')" "${#dests[@]}"
stop_ibatd again
