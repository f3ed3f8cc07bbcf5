#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# packaging/nhc/ibat.nhc as NHC uses it: sourced, with NHC's `die` stubbed to record its calls.
# Against a fake `ibat` first on PATH: it passes when `ibat health` exits 0, calls `die 1` with
# ibat's output on one line when it exits 18 or 19, passes -t as --timeout, rejects bad options;
# then against the real ibat with no ibatd at the socket: die 1 with "ibatd is not running".
#   usage: nhc_check_test.sh SOURCE_DIR IBAT_CLI
set -uo pipefail
src=${1:?usage: nhc_check_test.sh SOURCE_DIR IBAT_CLI}
ibat_cli=${2:?usage: nhc_check_test.sh SOURCE_DIR IBAT_CLI}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# NHC's die: records "CODE|MESSAGE" (NHC marks the node down with the message).
DIED=()
die() { DIED+=("$1|$2"); }
# shellcheck source=/dev/null
source "$src/packaging/nhc/ibat.nhc"

# The fake ibat prints $FAKE_OUT / $FAKE_ERR, records its arguments and exits $FAKE_RC.
mkdir "$work/bin"
cat >"$work/bin/ibat" <<'FAKE'
#!/usr/bin/env bash
printf '%s\n' "$*" >"$FAKE_ARGS"
[[ -z $FAKE_OUT ]] || printf '%s\n' "$FAKE_OUT"
[[ -z $FAKE_ERR ]] || printf '%s\n' "$FAKE_ERR" >&2
exit "$FAKE_RC"
FAKE
chmod +x "$work/bin/ibat"
export FAKE_ARGS="$work/args" FAKE_OUT FAKE_ERR FAKE_RC

# check NAME WANT_RC WANT_ARGS WANT_DIED [check_ibat_health ARGS...]
check() {
  local name=$1 want_rc=$2 want_args=$3 want_died=$4 before=$failures; shift 4
  DIED=()
  rm -f "$FAKE_ARGS"
  local rc=0
  PATH="$work/bin:$PATH" check_ibat_health "$@" || rc=$?
  [[ $rc == "$want_rc" ]] || fail "$name: check_ibat_health returned $rc, expected $want_rc"
  local args=""
  [[ ! -f $FAKE_ARGS ]] || args=$(<"$FAKE_ARGS")
  [[ $args == "$want_args" ]] || fail "$name: ibat ran with '$args', expected '$want_args'"
  local died="${DIED[*]:-}"
  [[ $died == "$want_died" ]] || fail "$name: die calls '$died', expected '$want_died'"
  ((failures > before)) || echo "ok: $name"
}

FAKE_OUT="ok: 2 ports active, with their SM and SA answering" FAKE_ERR="" FAKE_RC=0
check "healthy" 0 "health" ""
check "healthy, -t 3" 0 "health --timeout 3" "" -t 3

FAKE_OUT="" FAKE_ERR="ibat health: ibatd did not answer within 5 s (socket /run/ibat/ibatd.sock)" FAKE_RC=19
check "wedged ibatd" 1 "health" \
  "1|check_ibat_health:  ibat health: ibatd did not answer within 5 s (socket /run/ibat/ibatd.sock)"

FAKE_OUT=$'mlx5_1:1: link down (check the cable and `ibstat`)\nmlx5_1:1: no SM (SM LID 0): is OpenSM running on this subnet?'
FAKE_ERR="" FAKE_RC=18
check "unhealthy port, two lines become one" 1 "health --timeout 0.5" \
  "1|check_ibat_health:  mlx5_1:1: link down (check the cable and \`ibstat\`); mlx5_1:1: no SM (SM LID 0): is OpenSM running on this subnet?" \
  -t 0.5

FAKE_OUT="" FAKE_ERR="" FAKE_RC=137
check "killed without a message" 1 "health" "1|check_ibat_health:  ibat health exited 137 without a message"

check "unknown option" 1 "" "1|check_ibat_health:  Invalid option:  -x (usage: check_ibat_health [-t SECONDS])" -x
check "-t without seconds" 1 "" "1|check_ibat_health:  Option -t requires an argument (seconds)." -t

# The real ibat, no ibatd at the socket: NHC gets exit 19's one line.
mkdir "$work/real"
ln -s "$(realpath "$ibat_cli")" "$work/real/ibat"
DIED=()
rc=0
IBAT_SOCKET="$work/none.sock" PATH="$work/real:$PATH" check_ibat_health -t 2 || rc=$?
want="1|check_ibat_health:  ibat health: ibatd is not running (socket $work/none.sock: No such file or directory) (start it with 'systemctl start ibatd', or pass --socket)"
if [[ $rc == 1 && ${DIED[*]:-} == "$want" ]]; then
  echo "ok: real ibat without ibatd"
else
  fail "real ibat without ibatd: returned $rc, die calls '${DIED[*]:-}', expected '$want'"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "nhc check OK"
