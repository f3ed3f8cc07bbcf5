#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.sigterm: SIGTERM while resolves wait for an SA that does not answer (100 % MAD loss on the
# daemon's port): every pending request is answered `cancelled` (CLI exit 14), ibatd exits 0,
# and the snapshot is written at shutdown; a new ibatd loads it.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2eterm)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
node=h0005
# Long MAD timeout, no resends, long deadlines: requests stay pending while the port drops MADs.
# No prefetch: the destinations asked are misses, and the snapshot holds just the paths asked.
cat >"$E2E_DIR/d.toml" <<'TOML'
log_level = "info"
[policy]
prefetch = "off"
request_timeout_ms = 60000
[fabric]
mad_timeout_ms = 30000
mad_retries = 0
poll_interval_ms = 500
[snapshot]
interval_s = 0
TOML
start_ibatd "$name" $node d
cached=(h0011 h0022 h0027)
for dest in "${cached[@]}"; do wait_resolving d "$(host "$name" $dest gid)"; done
[[ ! -e $E2E_DIR/d.cache ]] || fail "snapshot written before shutdown although interval_s = 0"

"$LAB" loss --name "$name" "$node[1]" 100 >/dev/null
waiting=(h0001 h0013 h0019 h0030)
pids=()
for dest in "${waiting[@]}"; do
  (rc=0; cli d resolve --dgid "$(host "$name" $dest gid)" --timeout 60000 >/dev/null 2>"$E2E_DIR/$dest.err" || rc=$?
   echo $rc >"$E2E_DIR/$dest.rc") &
  pids+=($!)
done
deadline=$((SECONDS + 20))
until [[ $(jq_py "$(cli d stats --json)" 'j["pending"]') == "${#waiting[@]}" ]]; do
  ((SECONDS < deadline)) || fail "requests not pending after 20 s: $(cli d stats --json)"
  sleep 0.1
done
pass "${#waiting[@]} resolves pending while the port drops every MAD"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
for pid in "${pids[@]}"; do wait "$pid"; done
for dest in "${waiting[@]}"; do
  expect_eq "exit code of the pending resolve of $dest (14: cancelled)" "$(cat "$E2E_DIR/$dest.rc")" 14
done
expect_contains "ibatd log" "$(cat "$E2E_DIR/d.err")" "${#waiting[@]} requests pending are cancelled"
[[ -s $E2E_DIR/d.cache ]] || fail "no snapshot at $E2E_DIR/d.cache after SIGTERM"
pass "snapshot written at shutdown ($(stat -c %s "$E2E_DIR/d.cache") bytes)"

# The snapshot holds the cached paths: a new daemon serves them from its cache (cache-only) once
# it knows its local port (PortInfo needs the port to pass MADs again).
"$LAB" loss --name "$name" "$node[1]" 0 >/dev/null
cp "$E2E_DIR/d.cache" "$E2E_DIR/d2.cache"
start_ibatd "$name" $node d2
expect_contains "new ibatd log" "$(cat "$E2E_DIR/d2.err")" "warm cache: ${#cached[@]} paths loaded"
deadline=$((SECONDS + 20))
until cli d2 resolve --dgid "$(host "$name" ${cached[0]} gid)" --cache-only >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "no cache-only answer for ${cached[0]} from the warm cache within 20 s"
  sleep 0.1
done
for dest in "${cached[@]}"; do
  out=$(cli d2 resolve --dgid "$(host "$name" $dest gid)" --cache-only --json) || fail "cache-only resolve of $dest after restart: exit $?"
  expect_eq "DLID of $dest from the warm cache" "$(jq_py "$out" 'j["dlid"]')" "$(host "$name" $dest lid)"
done
stop_ibatd d2
expect_eq "second ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
