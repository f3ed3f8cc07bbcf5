# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Shared helpers for tests/lab/faults_*.sh (docs/reliability.md): ibatd on lab nodes with a test config,
# ibat-load runs and their invariants, daemon RSS and sanitizer checks, report records.
# Source it after lab_lib.sh. Each script uses one fabric of its own.
LOAD=${IBAT_BIN_DIR:-$LAB_TEST_DIR/../../build/bin}/ibat-load
[[ -x $LOAD ]] || fail "ibat-load not built at $LOAD (build target ibat-load)"
# Appended to what the caller set (later ASan options win): verify_asan_link_order=0 because
# umad2sim is preloaded into a sanitized ibatd; a small quarantine keeps a sanitized daemon's RSS
# flat once warm (the default 256 MB would read as growth), so RSS growth means a real leak.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:quarantine_size_mb=8:detect_leaks=1
# write_config: quick retries, short MAD timeouts, a snapshot every second
DAEMON_KIND=faults
CONFIG_POLICY_DEFAULTS=("revalidate_jitter_ms = 200" "retry_base_ms = 100" "retry_max_ms = 1000")
CONFIG_TABLES='[fabric]
mad_timeout_ms = 200
mad_retries = 2
poll_interval_ms = 500
[snapshot]
interval_s = 1'
source "$LAB_TEST_DIR/ibatd_lib.sh"
FAULTS_DIR=$DAEMON_DIR

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/${DAEMON_PID[$1]}/status"; }

# expect_rss_stable TAG BEFORE_KB: RSS now within max(16 MiB, 25 %) of BEFORE_KB.
# The allowance is the fault's peak working set, which the allocator keeps when the baseline comes
# before the fault. faults.loss and faults.clients, whose peaks came nearest to it (up to 84 % of
# it under ASan: ~1,800 queries outstanding at 50 % MAD loss, 500 connections' buffers), run their
# faults twice and take the baseline between the rounds.
# Leaks proper are LeakSanitizer's job (detect_leaks=1, checked at exit); this catches growth that
# scales with the load (a map never pruned), which 9,000+ requests per scenario push far past it.
expect_rss_stable() {
  local now; now=$(rss_kb "$1")
  local bound=$(( $2 / 4 > 16384 ? $2 / 4 : 16384 ))
  (( now - $2 <= bound )) || fail "ibatd $1 RSS grew from $2 kB to $now kB (bound +$bound kB)"
  pass "ibatd $1 RSS $2 kB -> $now kB (bound +$bound kB)"
}

# expect_no_sanitizer_report TAG: nothing from ASan/UBSan/LSan in the daemon's stderr
expect_no_sanitizer_report() {
  if grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|Undefined|Leak)' "$FAULTS_DIR/$1.err" >&2; then
    fail "sanitizer report in ibatd $1's stderr ($FAULTS_DIR/$1.err)"
  fi
  pass "no sanitizer report from ibatd $1"
}

# stop_ibatd_cleanly TAG: SIGTERM; the daemon must exit 0 without a sanitizer report
stop_ibatd_cleanly() {
  stop_ibatd "$1"
  expect_no_sanitizer_report "$1"
  [[ $DAEMON_EXIT -eq 0 ]] || fail "ibatd $1 exited $DAEMON_EXIT after SIGTERM: $(tail -5 "$FAULTS_DIR/$1.err")"
  pass "ibatd $1 stopped cleanly"
}

# write_dgids NAME FILE [--lids] [--except NODE...]: the fabric's HCA GIDs (with their current
# LIDs as the expected DLID when --lids), from `ibat-lab hosts --json`
write_dgids() {
  local name=$1 file=$2; shift 2
  "$LAB" hosts --name "$name" --json | python3 -c '
import json, sys
args = sys.argv[1:]
lids = "--lids" in args
skip = set(args[args.index("--except") + 1:]) if "--except" in args else set()
for h in json.load(sys.stdin):
    if h["node"] not in skip:
        print(h["gid"], h["lid"] if lids else "")' "$@" >"$file"
}

# load_start OUT ARGS...: ibat-load --json in the background (sets LOAD_PID)
load_start() {
  local out=$1; shift
  "$LOAD" --json "$@" >"$out" 2>"$out.err" &
  LOAD_PID=$!
}

# load_wait OUT WHAT: waits for the background load; it must exit 0 (all invariants hold)
load_wait() {
  local rc=0
  wait "$LOAD_PID" || rc=$?
  load_verdict "$1" "$2" "$rc"
}

# load_run OUT WHAT ARGS...: ibat-load --json in the foreground; it must exit 0
load_run() {
  local out=$1 what=$2 rc=0; shift 2
  "$LOAD" --json "$@" >"$out" 2>"$out.err" || rc=$?
  load_verdict "$out" "$what" "$rc"
}

load_verdict() {
  [[ $3 -eq 0 ]] || fail "$2: ibat-load exit $3: $(cat "$1" "$1.err")"
  pass "$2: $(load_line "$1")"
}

# load_line OUT: one-line summary of a load JSON
load_line() {
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
lat = s["latency_ms"]
print("{} sent, {} answered, twice {}, dlid0 {}, failures {}, uncached {}, max {} ms, SA queries {}".format(
    s["sent"], s["answered"], s["answered_twice"], s["dlid0"], s["failures"] or 0,
    s["uncached_requests"], lat["max"], s["sa_queries"]))' "$1"
}

# jq_py OUT EXPR: evaluates a Python expression over the load JSON `s`
jq_py() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# report SCENARIO OUT [NOTE]: keeps a load JSON for scripts/faults-report.sh
report() {
  [[ -n ${IBAT_FAULTS_REPORT_DIR:-} ]] || return 0
  mkdir -p "$IBAT_FAULTS_REPORT_DIR"
  python3 -c '
import json, sys
s = json.load(open(sys.argv[2]))
s["scenario"] = sys.argv[1]
s["note"] = sys.argv[3]
with open(sys.argv[4], "a") as f:
    f.write(json.dumps(s) + "\n")' "$1" "$2" "${3:-}" "$IBAT_FAULTS_REPORT_DIR/results.jsonl"
}

# faults_setup NAME TOPOLOGY_ARGS... : fabric NAME up (fattree-32 plus the given `up` options),
# ibatd A on h0001 and B on h0002 with $FAULTS_DIR/ibatd.toml (write it before, or the default
# test config is used), the destination list $DGIDS (every HCA), both caches warmed, and a short
# steady load so that RSS baselines (RSS_A, RSS_B) are taken on warm daemons.
# Sets LOAD_ARGS: the standard load over both daemons (cached + 5 % uncached, paced; request
# deadline $LOAD_TIMEOUT_MS, default 15 s).
faults_setup() {
  local name=$1; shift
  lab_up "$name" --topology "$TOPO/fattree-32.net" "$@" >/dev/null
  CONFIG=$FAULTS_DIR/ibatd.toml
  [[ -s $CONFIG ]] || write_config "$CONFIG" "retry_count = 12"
  DGIDS=$FAULTS_DIR/dgids
  write_dgids "$name" "$DGIDS"
  local first; first=$(awk 'NR == 1 {print $1}' "$DGIDS")
  start_ibatd "$name" h0001 A --config "$CONFIG"
  start_ibatd "$name" h0002 B --config "$CONFIG"
  wait_resolving A "$first"
  wait_resolving B "$first"
  LOAD_ARGS=(--socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 4 --depth 8
             --rate 1500 --uncached-share 0.05 --timeout-ms "${LOAD_TIMEOUT_MS:-15000}" --expect-exists)
  local tag
  for tag in A B; do
    load_run "$FAULTS_DIR/warm-$tag.json" "warm-up: every destination once through ibatd $tag" \
      --socket "$(sock $tag)" --dgids "$DGIDS" --count "$(wc -l <"$DGIDS")" --depth 64 --expect-exists
  done
  load_run "$FAULTS_DIR/warm.json" "2 s of steady load on the warm daemons" \
    --socket "$(sock A)" --socket "$(sock B)" --dgids "$DGIDS" --connections 2 --depth 16 --duration 2 --rate 1500 --expect-exists
  RSS_A=$(rss_kb A)
  RSS_B=$(rss_kb B)
}

# faults_finish: both daemons kept a stable RSS, stop cleanly, and reported nothing to sanitizers
faults_finish() {
  local tag
  for tag in A B; do
    expect_rss_stable "$tag" "$( [[ $tag == A ]] && echo "$RSS_A" || echo "$RSS_B")"
    stop_ibatd_cleanly "$tag"
  done
}
