#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The memory benchmark (`make bench` runs it from scripts/bench.sh; docs/performance.md, "Memory"):
# ibatd's RSS and the bytes its shared table uses in the socket's directory (on an installed host
# /run, tmpfs: RAM) against the ports it serves and the paths it holds.
#  * the real ibatd on lab fabrics: idle on one port (fattree-32, prefetch off, nothing held), and
#    on a host with 4 HCAs of a 12-host 4-rail tree with the default config (each port's GetTable
#    brings its subnet: 48 paths a port, 192 in all);
#  * ibat-bench-memory: the daemon's Service in-process with fake ports (the daemon minus its
#    fabric threads): idle on 1 and on 8 ports, 4 ports x 50 paths, 8 ports x 10,000 paths, and
#    those 8 x 10,000 again with the same paths of one QoS class (what a class costs a path held).
# One JSON object per line on stdout, also kept in $BIN_DIR/../ibat-bench-memory.json.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-build/bin}
OUT=$BIN_DIR/../ibat-bench-memory.json
# The socket's directory on tmpfs (/dev/shm), as /run is on an installed host.
name=benchmem-$$ work=$(mktemp -d /dev/shm/ibat-bench-memory.XXXXXX) daemon="" lab_up=0
cleanup() {
  if [[ -n $daemon ]]; then kill -TERM "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
  if ((lab_up)); then lab/ibat-lab down --name "$name" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
ibat() { "$BIN_DIR/ibat" --socket "$work/ibatd.sock" "$@"; }

# measure SCENARIO PORTS: one JSON line of the running ibatd (its pid: the process whose command
# line names our socket) and its table file.
measure() {
  local pid
  pid=$(pgrep -f -- "--socket $work/ibatd.sock" | while read -r p; do
          [[ $(readlink "/proc/$p/exe") == */ibatd ]] && echo "$p"; done | head -1)
  [[ -n $pid ]] || { echo "bench-memory: no ibatd process found" >&2; return 1; }
  python3 - "$1" "$2" "$pid" "$work/ibatd.sock.table" "$(ibat stats --json)" <<'PY'
import json, os, sys
scenario, ports, pid, table, stats = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
status = {}
for line in open(f"/proc/{pid}/status"):
    key, _, value = line.partition(":")
    status[key] = value.split()
threads = int(status["Threads"][0])
# RSS by what holds it (/proc/PID/smaps): the table file, other files (the binary and its
# libraries' pages), the heap ([heap] and glibc's other arenas), thread stacks (anonymous 8 MiB
# mappings) and the main stack.
rss = {"table": 0, "files": 0, "heap": 0, "thread_stacks": 0, "main_stack": 0}
stacks = 0
mapping = None
for line in open(f"/proc/{pid}/smaps"):
    fields = line.split()
    if "-" in fields[0] and not fields[0].endswith(":"):
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        path = fields[5] if len(fields) > 5 else ""
        if path.endswith(".table"):
            mapping = "table"
        elif path == "[stack]":
            mapping = "main_stack"
        elif path.startswith("/"):
            mapping = "files"
        elif path == "" and hi - lo in (8 << 20, (8 << 20) - 4096):
            mapping, stacks = "thread_stacks", stacks + 1
        elif path in ("", "[heap]"):
            mapping = "heap"
        else:
            mapping = None  # [vdso], [vvar]...
    elif fields[0] == "Rss:" and mapping:
        rss[mapping] += int(fields[1])
st = os.stat(table)
print(json.dumps({"scenario": scenario, "daemon": "ibatd", "ports": ports, "paths": stats["entries"],
                  "rss_kib": int(status["VmRSS"][0]), "rss_anon_kib": int(status["RssAnon"][0]),
                  "rss_shmem_kib": int(status["RssShmem"][0]), "threads": threads, "thread_stacks": stacks,
                  "rss_by_kind_kib": rss,
                  "table_file_bytes": st.st_size, "table_used_bytes": st.st_blocks * 512}))
PY
}

# run_lab SCENARIO PORTS TOPOLOGY WHERE CONFIG: ibatd on WHERE (--node N or --host H) until every
# port is active, SM known and SA answering, and each port's GetTable (if any) has been answered.
run_lab() {
  local scenario=$1 ports=$2 topology=$3 where=$4 config=$5 tables=$6
  lab/ibat-lab up --name "$name" --topology "$topology" >/dev/null ||
    { echo "bench-memory: ibat-lab up failed, retrying once" >&2; lab/ibat-lab up --name "$name" --topology "$topology" >/dev/null; }
  lab_up=1
  printf '%s\n' "$config" >"$work/ibatd.toml"
  local ibatd lab
  ibatd=$(cd "$BIN_DIR" && pwd)/ibatd lab=$PWD/lab/ibat-lab
  # shellcheck disable=SC2086  # WHERE is two words
  (cd "$work" && exec "$lab" run --name "$name" $where -- "$ibatd" --config "$work/ibatd.toml" \
     --socket "$work/ibatd.sock" --acm-socket "" 2>"$work/ibatd.log" >/dev/null) &
  daemon=$!
  local deadline=$((SECONDS + 60))
  until ibat health --timeout 2 >/dev/null 2>&1 &&
        (($(ibat stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sa_tables_answered"])') >= tables)); do
    kill -0 "$daemon" 2>/dev/null || { echo "bench-memory: ibatd exited: $(tail -5 "$work/ibatd.log")" >&2; return 1; }
    ((SECONDS < deadline)) || { echo "bench-memory: ibatd not ready after 60 s: $(tail -5 "$work/ibatd.log")" >&2; return 1; }
    sleep 0.2
  done
  measure "$scenario" "$ports"
  kill -TERM "$daemon"; wait "$daemon" || true; daemon=""
  lab/ibat-lab down --name "$name" >/dev/null; lab_up=0
}

{
  run_lab "idle, 1 port" 1 lab/topologies/fattree-32.net "--node h0001" \
    $'log_level = "warn"\n[policy]\nprefetch = "off"\n[snapshot]\ncache_file = ""' 0
  lab/ibat-lab topology rails --hosts 12 --rails 4 --hosts-per-leaf 4 --spines 2 --output "$work/rails-12x4.net"
  run_lab "4 ports, 192 paths" 4 "$work/rails-12x4.net" "--host g0001" \
    $'log_level = "warn"\n[snapshot]\ncache_file = ""' 4
  "$BIN_DIR/ibat-bench-memory"
} | tee "$OUT"
