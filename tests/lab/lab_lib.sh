# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Shared helpers for tests/lab/lab_*.sh: paths, assertions, cleanups at exit (on_exit), a fabric
# that goes down on exit. Source it first; it sets `set -euo pipefail`.
set -euo pipefail

LAB_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB=${IBAT_LAB:-$LAB_TEST_DIR/../../lab/ibat-lab}
TOPO=${IBAT_TOPOLOGY_DIR:-$LAB_TEST_DIR/../../lab/topologies}
LAB_FABRICS=()
# Debian's umad2sim leaks a queued MAD when a file closes under its receiver thread (see the file).
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$LAB_TEST_DIR/lsan-umad2sim.supp

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [[ "$2" == "$3" ]] || fail "$1: got '$2', expected '$3'"; pass "$1 = $3"; }

# expect_exit CODE WHAT -- CMD...: runs CMD, checks its exit code, keeps its stderr in $LAST_ERR
expect_exit() {
  local want=$1 what=$2; shift 3
  local rc=0
  LAST_ERR=$("$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq $want ]] || fail "$what: exit $rc, expected $want; stderr: $LAST_ERR"
  pass "$what (exit $want)"
}

expect_contains() { [[ "$2" == *"$3"* ]] || fail "$1: '$3' not in: $2"; pass "$1 mentions '$3'"; }

# lab_name TAG: a fabric name unique to this test run (several build trees may test at once)
lab_name() { echo "t-$1-$$"; }

# on_exit CMD: CMD (a string, eval'd) runs when the test exits, however it ends (its last line,
# fail, set -e, SIGINT, SIGTERM, SIGHUP). Cleanups run last registered first, so what a test or a
# helper started on a fabric is stopped before the fabric goes down: the test's own (rm -rf "$tmp",
# a background probe), then ibatd (ibatd_lib.sh), then OpenSM and ibsim (cleanup_fabrics, the
# first registered). A failing cleanup does not stop the others; a cleanup must not call exit.
# Tests and helpers use on_exit, never `trap ... EXIT` (or INT, TERM, HUP): that would replace
# the one trap running them all, and leave the fabric and its daemons running. The `trap` function
# below refuses it; tests/lab/run_test.sh fails a test that still leaves a process behind.
LAB_ON_EXIT=()
on_exit() { LAB_ON_EXIT+=("$1"); }
lab_run_exit() {
  local rc=$? i
  set +eu  # a cleanup may meet an unset pid (a coproc gone, a probe never started)
  for ((i = ${#LAB_ON_EXIT[@]} - 1; i >= 0; i--)); do eval "${LAB_ON_EXIT[i]}" || true; done
  LAB_ON_EXIT=()
  exit "$rc"
}
builtin trap lab_run_exit EXIT
builtin trap 'exit 129' HUP
builtin trap 'exit 130' INT
builtin trap 'exit 143' TERM

# trap: the builtin, except that it refuses EXIT, HUP, INT, QUIT and TERM (use on_exit)
trap() {
  local args=("$@") sig
  [[ ${args[0]:-} != -- ]] || args=("${args[@]:1}")
  case ${args[0]:-} in -p | -l | -lp | -pl | '') builtin trap "$@"; return ;; esac
  ((${#args[@]} == 1)) || args=("${args[@]:1}")
  for sig in "${args[@]}"; do
    sig=${sig^^}
    case ${sig#SIG} in
      EXIT | 0 | HUP | 1 | INT | 2 | QUIT | 3 | TERM | 15)
        fail "trap ... $sig would drop the lab's cleanups (fabrics, daemons): use on_exit CMD" ;;
    esac
  done
  builtin trap "$@"
}

cleanup_fabrics() {
  local n
  for n in "${LAB_FABRICS[@]}"; do "$LAB" down --name "$n" >/dev/null 2>&1 || true; done
}
on_exit cleanup_fabrics

# lab_up NAME ARGS...: brings a fabric up and registers it for cleanup_fabrics. Not in $(...): a
# subshell's registration is lost (add the name to LAB_FABRICS first, as lab_rails.sh does).
lab_up() {
  local name=$1; shift
  LAB_FABRICS+=("$name")
  "$LAB" up --name "$name" "$@"
}

# host_field NAME NODE FIELD: one field of one node from `hosts --json`
host_field() {
  "$LAB" hosts --name "$1" --json |
    python3 -c 'import json,sys; print(next(h[sys.argv[2]] for h in json.load(sys.stdin) if h["node"] == sys.argv[1]))' "$2" "$3"
}

# lids NAME: "node=lid" lines, sorted by node
lids() {
  "$LAB" hosts --name "$1" --json |
    python3 -c 'import json,sys; [print(h["node"] + "=" + str(h["lid"])) for h in json.load(sys.stdin)]' | sort
}

# sm_lid NAME NODE: the SM LID that NODE's port reports (PortInfo SMP to itself)
sm_lid() {
  "$LAB" run --name "$1" --node "$2" -- smpquery portinfo -D 0 | sed -n 's/^SMLid:\.*\([0-9]*\)$/\1/p'
}

# opensm_log NAME: the primary OpenSM's log of fabric NAME
opensm_log() { echo "${IBAT_LAB_DIR:-/tmp/ibat-lab}/$1/opensm-primary.log"; }

# ms_from_subnet_up OPENSM_LOG DAEMON_LOG: ms from OpenSM's last SUBNET UP to ibatd's last "SM
# changed" line (negative: ibatd knew before OpenSM announced it)
ms_from_subnet_up() {
  python3 - "$1" "$2" <<'PY'
import datetime, re, sys
ups = [m for m in (re.match(r"(\w{3} \d\d \d\d:\d\d:\d\d) (\d{6}) .*SUBNET UP", l) for l in open(sys.argv[1])) if m]
changes = [l for l in open(sys.argv[2]) if "SM changed" in l]
changed = datetime.datetime.strptime(changes[-1][:23], "%Y-%m-%d %H:%M:%S.%f")
up = datetime.datetime.strptime(f"{changed.year} {ups[-1].group(1)}", "%Y %b %d %H:%M:%S")
up += datetime.timedelta(microseconds=int(ups[-1].group(2)))
print(round((changed - up).total_seconds() * 1e3))
PY
}

# sminfo_state NAME NODE: state word of the master SM as seen from NODE (e.g. SMINFO_MASTER)
sminfo_state() { "$LAB" run --name "$1" --node "$2" -- sminfo | awk '{print $NF}'; }
