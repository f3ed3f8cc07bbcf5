# Shared helpers for tests/lab/e2e_*.sh (ctest e2e.*): ibatd on lab nodes, the ibat CLI against it,
# saquery for reference answers. Source it after lab_lib.sh. Binaries come from ctest's
# environment (IBATD, IBAT_CLI: CMake target paths), else from build/bin.
BIN=${IBAT_BIN_DIR:-$LAB_TEST_DIR/../../build/bin}
IBATD=${IBATD:-$BIN/ibatd}
IBAT_CLI=${IBAT_CLI:-$BIN/ibat}
[[ -x $IBATD ]] || fail "ibatd not built at $IBATD (build target ibatd)"
[[ -x $IBAT_CLI ]] || fail "ibat not built at $IBAT_CLI (build target ibat_cli)"
# umad2sim is preloaded into a sanitized ibatd: skip ASan's link-order check.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

E2E_DIR=$(mktemp -d /tmp/ibat-e2e.XXXXXX)
declare -A DAEMON_PID
e2e_cleanup() {
  local tag
  for tag in "${!DAEMON_PID[@]}"; do kill -KILL "${DAEMON_PID[$tag]}" 2>/dev/null || true; done
  cleanup_fabrics
  if [[ ${KEEP_E2E_DIR:-0} == 1 ]]; then echo "kept $E2E_DIR" >&2; else rm -rf "$E2E_DIR"; fi
}
trap e2e_cleanup EXIT

# write_config FILE [TOML LINES of [policy]...]: quick retries, snapshot only at shutdown
write_config() {
  local file=$1; shift
  { echo 'log_level = "info"'; echo '[policy]'; printf '%s\n' "$@"; } >"$file"
  cat >>"$file" <<'TOML'
[fabric]
poll_interval_ms = 500
[snapshot]
interval_s = 0
TOML
}

# start_ibatd NAME NODE TAG [ARGS...]: ibatd on NODE, socket $E2E_DIR/TAG.sock, snapshot
# TAG.cache, config TAG.toml (write_config'd unless it exists), stderr in TAG.err; returns once
# the socket exists.
start_ibatd() {
  local name=$1 node=$2 tag=$3; shift 3
  [[ -f $E2E_DIR/$tag.toml ]] || write_config "$E2E_DIR/$tag.toml"
  rm -f "$E2E_DIR/$tag.sock"
  (cd "$E2E_DIR" && exec "$LAB" run --name "$name" --node "$node" -- "$IBATD" --config "$E2E_DIR/$tag.toml" \
     --socket "$E2E_DIR/$tag.sock" --cache-file "$E2E_DIR/$tag.cache" "$@" 2>>"$E2E_DIR/$tag.err" >/dev/null) &
  DAEMON_PID[$tag]=$!
  local deadline=$((SECONDS + 20))
  until [[ -S $E2E_DIR/$tag.sock ]]; do
    kill -0 "${DAEMON_PID[$tag]}" 2>/dev/null || fail "ibatd $tag exited at start: $(tail -5 "$E2E_DIR/$tag.err")"
    ((SECONDS < deadline)) || fail "ibatd $tag: no socket after 20 s"
    sleep 0.1
  done
}

# stop_ibatd TAG: SIGTERM, then the daemon's exit code in $DAEMON_EXIT
stop_ibatd() {
  DAEMON_EXIT=0
  kill -TERM "${DAEMON_PID[$1]}"
  wait "${DAEMON_PID[$1]}" || DAEMON_EXIT=$?
  unset "DAEMON_PID[$1]"
}

sock() { echo "$E2E_DIR/$1.sock"; }
# cli TAG ARGS...: the ibat CLI against daemon TAG
cli() { local tag=$1; shift; "$IBAT_CLI" --socket "$(sock "$tag")" "$@"; }

# wait_resolving TAG GID: until a resolve of GID succeeds (local port known, SA answering)
wait_resolving() {
  local deadline=$((SECONDS + 30))
  until cli "$1" resolve --dgid "$2" --timeout 2000 >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "ibatd $1 does not resolve $2 within 30 s: $(tail -5 "$E2E_DIR/$1.err")"
    sleep 0.2
  done
}

# hosts_json NAME: `ibat-lab hosts --json`, cached in $E2E_DIR/hosts-NAME.json; prints the file
hosts_file() {
  local f=$E2E_DIR/hosts-$1.json
  [[ -s $f ]] || "$LAB" hosts --name "$1" --json >"$f"
  echo "$f"
}
# host NAME NODE FIELD: gid, lid or guid of NODE
host() {
  python3 -c 'import json,sys; print(next(h[sys.argv[3]] for h in json.load(open(sys.argv[1])) if h["node"] == sys.argv[2]))' \
    "$(hosts_file "$1")" "$2" "$3"
}

# saquery_path NAME NODE SGID DGID: saquery's PathRecord as JSON with the CLI's units
# (dlid, slid, sl, mtu in bytes, rate in Gb/s, pkt_life)
saquery_path() {
  "$LAB" run --name "$1" --node "$2" -- saquery -p --sgid-to-dgid "$3-$4" 2>/dev/null | python3 -c '
import json, re, sys
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
f = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", sys.stdin.read(), re.M))
print(json.dumps({"dlid": int(f["dlid"]), "slid": int(f["slid"]), "sl": int(f["sl"], 16),
                  "mtu": MTU[int(f["mtu"], 16) & 0x3F], "rate": RATE[int(f["rate"], 16) & 0x3F],
                  "pkt_life": int(f["pkt_life"], 16) & 0x3F}))'
}

# jq_py JSON EXPR: evaluates a Python expression over `j` (the parsed JSON) and prints it
jq_py() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
