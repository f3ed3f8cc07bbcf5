# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Helpers for lab tests that run ibatd on lab nodes, shared by e2e_lib.sh and faults_lib.sh: the
# binaries, one folder for the daemons' configs, sockets, snapshots and logs, a test config, and
# starting, probing and stopping daemons. Source it after lab_lib.sh with DAEMON_KIND (e2e, faults)
# and the config parts (CONFIG_POLICY_DEFAULTS, CONFIG_TABLES; see write_config) set.
# Daemons still running at exit are killed (daemons_cleanup, registered with on_exit: before the
# fabric goes down). The folder, $DAEMON_DIR, is /tmp/ibat-$DAEMON_KIND.XXXXXX; it is removed at
# exit unless KEEP_<KIND>_DIR=1 (KEEP_E2E_DIR, KEEP_FAULTS_DIR). Binaries: IBATD and IBAT_CLI (ctest passes
# CMake target paths), else from $IBAT_BIN_DIR, else build/bin.
BIN=${IBAT_BIN_DIR:-$LAB_TEST_DIR/../../build/bin}
IBATD=${IBATD:-$BIN/ibatd}
IBAT_CLI=${IBAT_CLI:-$BIN/ibat}
[[ -x $IBATD ]] || fail "ibatd not built at $IBATD (build target ibatd)"
[[ -x $IBAT_CLI ]] || fail "ibat not built at $IBAT_CLI (build target ibat_cli)"

DAEMON_DIR=$(mktemp -d "/tmp/ibat-$DAEMON_KIND.XXXXXX")
declare -A DAEMON_PID
# daemons_cleanup (on_exit, so before lab_lib.sh's cleanup_fabrics takes the fabrics down): kills
# the daemons still running, waits for them and removes $DAEMON_DIR
daemons_cleanup() {
  local tag keep=KEEP_${DAEMON_KIND^^}_DIR
  for tag in "${!DAEMON_PID[@]}"; do kill -KILL "${DAEMON_PID[$tag]}" 2>/dev/null || true; done
  for tag in "${!DAEMON_PID[@]}"; do wait "${DAEMON_PID[$tag]}" 2>/dev/null || true; done
  if [[ ${!keep:-0} == 1 ]]; then echo "kept $DAEMON_DIR" >&2; else rm -rf "$DAEMON_DIR"; fi
}
on_exit daemons_cleanup

# write_config FILE [TOML LINES of [policy]...]: log_level info, the given [policy] lines, then
# the lines of $CONFIG_POLICY_DEFAULTS (array) whose key was not given (TOML forbids duplicate
# keys, so given lines override them), then $CONFIG_TABLES (the [fabric] and [snapshot] tables).
write_config() {
  local file=$1; shift
  {
    echo 'log_level = "info"'
    echo '[policy]'
    printf '%s\n' "$@" "${CONFIG_POLICY_DEFAULTS[@]}"
  } | awk -F' *= *' '!seen[$1]++' >"$file"
  printf '%s\n' "$CONFIG_TABLES" >>"$file"
}

# start_ibatd NAME NODE TAG [ARGS...]: ibatd on NODE (host:H: on every HCA of host H, the umad
# twin's `run --host`; IBATD_ALSO="FABRIC:NODE ..." adds CAs of other fabrics) with socket
# $DAEMON_DIR/TAG.sock, snapshot
# TAG.cache and stderr in TAG.err, ARGS added; returns once the socket exists. Unless ARGS hold a
# --config, the config is TAG.toml (write_config'd unless it exists). Unless ARGS hold an
# --acm-socket, the ACM socket is TAG.acm.sock: ibatd's default, /run/ibat/acm.sock, is the host's
# and one path for every test's daemons would collide; IBATD_ACM_FROM_CONFIG=1 passes none, so the
# config's acm_socket (or the built-in default) holds.
start_ibatd() {
  local name=$1 node=$2 tag=$3; shift 3
  local config=(--config "$DAEMON_DIR/$tag.toml") acm=(--acm-socket "$DAEMON_DIR/$tag.acm.sock") arg
  local where=(--node "$node")
  [[ $node != host:* ]] || where=(--host "${node#host:}")
  for arg in ${IBATD_ALSO:-}; do where+=(--also "$arg"); done
  for arg in "$@"; do
    [[ $arg != --config ]] || config=()
    [[ $arg != --acm-socket ]] || acm=()
  done
  [[ ${IBATD_ACM_FROM_CONFIG:-0} != 1 ]] || acm=()
  if ((${#config[@]})) && [[ ! -f ${config[1]} ]]; then write_config "${config[1]}"; fi
  rm -f "$DAEMON_DIR/$tag.sock"
  (cd "$DAEMON_DIR" && exec "$LAB" run --name "$name" "${where[@]}" -- "$IBATD" "${config[@]}" "${acm[@]}" \
     --socket "$DAEMON_DIR/$tag.sock" --cache-file "$DAEMON_DIR/$tag.cache" "$@" \
     2>>"$DAEMON_DIR/$tag.err" >/dev/null) &
  DAEMON_PID[$tag]=$!
  local deadline=$((SECONDS + 20))
  until [[ -S $DAEMON_DIR/$tag.sock ]]; do
    kill -0 "${DAEMON_PID[$tag]}" 2>/dev/null || fail "ibatd $tag exited at start: $(tail -5 "$DAEMON_DIR/$tag.err")"
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

# kill_ibatd TAG: SIGKILL (no snapshot write, no cleanup)
kill_ibatd() {
  kill -KILL "${DAEMON_PID[$1]}"
  wait "${DAEMON_PID[$1]}" 2>/dev/null || true
  unset "DAEMON_PID[$1]"
}

sock() { echo "$DAEMON_DIR/$1.sock"; }
# cli TAG ARGS...: the ibat CLI against daemon TAG
cli() { local tag=$1; shift; "$IBAT_CLI" --socket "$(sock "$tag")" "$@"; }

# ports_state TAG: "name=state" of every port daemon TAG serves, sorted ("none": it serves none)
ports_state() {
  cli "$1" ports --json | python3 -c 'import json, sys
print(" ".join(sorted(p["name"] + "=" + p["state"] for p in json.load(sys.stdin))) or "none")'
}

# wait_ports TAG WANT: until ports_state TAG is WANT (ibatd hears a CA come or go and re-reads the ports)
wait_ports() {
  local deadline=$((SECONDS + 20))
  until [[ $(ports_state "$1") == "$2" ]]; do
    ((SECONDS < deadline)) || fail "ibat ports: $(ports_state "$1"), expected $2; $(tail -5 "$DAEMON_DIR/$1.err")"
    sleep 0.1
  done
}

# twin_control FIFO LINE: one line to a daemon's umad twin (started with IBAT_TWIN_CONTROL=FIFO),
# waiting until the twin has carried it out (it appends the line to FIFO.done)
twin_control() {
  local before
  before=$(grep -cxF "$2" "$1.done" 2>/dev/null || true)
  echo "$2" >"$1"
  local deadline=$((SECONDS + 10))
  until (($(grep -cxF "$2" "$1.done" 2>/dev/null || echo 0) > ${before:-0})); do
    ((SECONDS < deadline)) || fail "the twin did not carry out '$2' within 10 s"
    sleep 0.05
  done
}

# wait_resolving TAG GID: until a resolve of GID through daemon TAG succeeds (local port known,
# SA answering)
wait_resolving() {
  local deadline=$((SECONDS + 30))
  until cli "$1" resolve --dgid "$2" --timeout 2000 >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "ibatd $1 does not resolve $2 within 30 s: $(tail -5 "$DAEMON_DIR/$1.err")"
    sleep 0.2
  done
}
