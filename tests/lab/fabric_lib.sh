# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Helpers shared by tests/lab/fabric_*.sh (sourced after lab_lib.sh): where ibat-probe is, and how
# to run a command attached to a node without preloading umad2sim into the test's own tools.
PROBE=${IBAT_BIN_DIR:-$LAB_TEST_DIR/../../build/bin}/ibat-probe
[[ -x $PROBE ]] || fail "ibat-probe not built at $PROBE (build target ibat-probe)"
# umad2sim's read() wrapper trips ASan's link-order check in sanitized builds.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

FABRIC_ENV_CACHE=$(mktemp -d)
on_exit 'rm -rf "$FABRIC_ENV_CACHE"'

# on_node NAME NODE CMD ARGS...: CMD with NODE's umad2sim environment (`ibat-lab env`, cached);
# umad2sim's "received data size" complaints are dropped from stderr.
on_node() {
  local name=$1 node=$2; shift 2
  local cache=$FABRIC_ENV_CACHE/$name-$node
  [[ -s $cache ]] || "$LAB" env --name "$name" --node "$node" | sed 's/^export //' >"$cache"
  local -a vars
  mapfile -t vars <"$cache"
  env "${vars[@]}" "$@" 2> >(grep -v '^ERR: received data size' >&2)
}

# on_node_exec NAME NODE CMD ARGS...: like on_node, but replaces the (sub)shell, so that `$!` of
# `( on_node_exec ... ) &` is CMD's own pid.
on_node_exec() {
  on_node "$1" "$2" true
  local -a vars
  mapfile -t vars <"$FABRIC_ENV_CACHE/$1-$2"
  shift 2
  exec env "${vars[@]}" "$@" 2> >(grep -v '^ERR: received data size' >&2)
}

# gid_of NAME NODE
gid_of() { host_field "$1" "$2" gid; }

# json_field JSON FIELD
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# start_monitor NAME NODE FILE POLL_MS [PROBE ARGS...]: `ibat-probe --monitor` on NODE in the
# background, its JSON lines in FILE; returns once the first local_port event is there. Sets MONITOR_PID
# and registers stop_monitor with on_exit (start one monitor at a time).
start_monitor() {
  local name=$1 node=$2 file=$3 poll_ms=$4; shift 4
  on_node "$name" "$node" true  # fills the env cache in this shell
  (on_node_exec "$name" "$node" "$PROBE" --monitor 300 --poll-ms "$poll_ms" "$@" >"$file") &
  MONITOR_PID=$!
  on_exit stop_monitor
  wait_event "$file" 'e["event"] == "local_port"' 10 >/dev/null
}

# stop_monitor: SIGTERM (the probe exits cleanly, printing its stats line)
stop_monitor() { kill -TERM "$MONITOR_PID" 2>/dev/null || true; wait "$MONITOR_PID" 2>/dev/null || true; }

# wait_event FILE PYTHON_CONDITION TIMEOUT_S [AFTER_WALL_MS]: prints the first event line `e`
# (a dict) with e["wall_ms"] >= AFTER_WALL_MS satisfying the condition; fails after the timeout.
wait_event() {
  local file=$1 cond=$2 timeout=$3 after=${4:-0}
  local deadline=$((SECONDS + timeout)) line
  while ((SECONDS <= deadline)); do
    line=$(python3 - "$file" "$after" <<PY
import json, sys
for raw in open(sys.argv[1]):
    try:
        e = json.loads(raw)
    except ValueError:
        continue
    if e["wall_ms"] >= int(sys.argv[2]) and ($cond):
        print(raw.strip())
        break
PY
)
    [[ -n $line ]] && { echo "$line"; return 0; }
    sleep 0.2
  done
  fail "no event with $cond in $file within ${timeout}s; got: $(tail -5 "$file")"
}

now_ms() { date +%s%3N; }
