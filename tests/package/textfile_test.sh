#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# packaging/ibat-textfile (run by ibat-textfile.service every 30 s from ibat-textfile.timer) with a
# fake `ibat` first on PATH and a temporary textfile directory: it writes ibat.prom by renaming a
# temporary file of the same directory (while ibat runs, the old file is still whole; afterwards the
# inode is new; no temporary file is left), appends ibat_textfile_written_timestamp_seconds with the
# time of the run, makes the file readable by node_exporter, and `promtool check metrics` accepts
# it. When ibat fails, hangs past IBAT_TEXTFILE_TIMEOUT, or the directory is missing, the previous
# file stays byte for byte with its inode, the exit status is non-zero and stderr is one line. Then
# the real ibat with no ibatd, and `systemd-analyze verify` of the service and timer.
#   usage: textfile_test.sh SOURCE_DIR IBAT_CLI
set -uo pipefail
src=${1:?usage: textfile_test.sh SOURCE_DIR IBAT_CLI}
ibat_cli=${2:?usage: textfile_test.sh SOURCE_DIR IBAT_CLI}
script=$(realpath "$src/packaging/ibat-textfile")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# The fake ibat records its arguments and what ibat.prom holds while it runs, prints $FAKE_OUT
# (a file) and $FAKE_ERR, and exits $FAKE_RC; FAKE_HANG=1 makes it never answer.
mkdir "$work/bin" "$work/dir"
cat >"$work/bin/ibat" <<'FAKE'
#!/usr/bin/env bash
printf '%s\n' "$*" >"$FAKE_ARGS"
cat "$FAKE_DIR/ibat.prom" >"$FAKE_SEEN" 2>/dev/null || : >"$FAKE_SEEN"
[[ ${FAKE_HANG:-0} != 1 ]] || exec sleep 600
[[ -z ${FAKE_OUT:-} ]] || cat "$FAKE_OUT"
[[ -z ${FAKE_ERR:-} ]] || printf '%s\n' "$FAKE_ERR" >&2
exit "${FAKE_RC:-0}"
FAKE
chmod +x "$work/bin/ibat"
cat >"$work/stats.prom" <<'PROM'
# HELP ibat_build_info The running ibatd's version.
# TYPE ibat_build_info gauge
ibat_build_info{version="1.0.0"} 1
# HELP ibat_resolves_total Resolve requests accepted.
# TYPE ibat_resolves_total counter
ibat_resolves_total{device="mlx5_0",port="1"} 4
PROM
export FAKE_ARGS="$work/args" FAKE_SEEN="$work/seen" FAKE_DIR="$work/dir" FAKE_OUT FAKE_ERR FAKE_RC FAKE_HANG
export IBAT_TEXTFILE_DIR="$work/dir"
unset IBAT_TEXTFILE_TIMEOUT
prom="$work/dir/ibat.prom"

# run [ENV=VALUE...]: runs the script with the fake ibat; sets RC, ERR (its stderr).
run() { RC=0; ERR=$(env PATH="$work/bin:$PATH" "$@" "$script" 2>&1 >/dev/null) || RC=$?; }
leftovers() { find "$work/dir" -mindepth 1 ! -name ibat.prom | wc -l; }
one_line() { [[ -n $ERR && $ERR != *$'\n'* ]]; }

# 1. First run: the file appears with ibat's text and the timestamp series.
FAKE_OUT="$work/stats.prom" FAKE_ERR="" FAKE_RC=0 FAKE_HANG=0
before=$(date +%s)
run
after=$(date +%s)
[[ $RC == 0 && -z $ERR ]] || fail "healthy run: exit $RC, stderr '$ERR'"
[[ $(<"$FAKE_ARGS") == "stats --prometheus" ]] || fail "ibat ran as 'ibat $(<"$FAKE_ARGS")'"
if [[ -f $prom ]]; then
  [[ $(head -n 6 "$prom") == "$(<"$work/stats.prom")" ]] || fail "ibat.prom does not start with ibat's output"
  stamp=$(sed -n 's/^ibat_textfile_written_timestamp_seconds \([0-9]*\)$/\1/p' "$prom")
  [[ -n $stamp ]] || fail "no ibat_textfile_written_timestamp_seconds sample in ibat.prom"
  ((stamp >= before && stamp <= after)) || fail "timestamp $stamp is not the time of the run ($before..$after)"
  grep -qx '# TYPE ibat_textfile_written_timestamp_seconds gauge' "$prom" || fail "the timestamp series has no TYPE gauge"
  [[ $(stat -c %a "$prom") == 644 ]] || fail "ibat.prom has mode $(stat -c %a "$prom"), node_exporter needs it readable (644)"
  if lint=$(promtool check metrics <"$prom" 2>&1) && [[ -z $lint ]]; then :; else fail "promtool check metrics: $lint"; fi
else
  fail "healthy run wrote no $prom"
fi
(($(leftovers) == 0)) || fail "temporary files left in the directory: $(ls -A "$work/dir")"
((failures == 0)) && echo "ok: first run writes ibat.prom with the timestamp series"

# 2. Second run: while ibat runs the old file is whole (not truncated in place); then a new inode.
f=$failures
old=$(<"$prom"); old_inode=$(stat -c %i "$prom")
printf 'ibat_resolves_total{device="mlx5_0",port="1"} 9\n' >"$work/stats2.prom"
FAKE_OUT="$work/stats2.prom"
run
[[ $RC == 0 ]] || fail "second run: exit $RC, stderr '$ERR'"
[[ $(<"$FAKE_SEEN") == "$old" ]] || fail "while ibat ran, ibat.prom was not the previous file: '$(<"$FAKE_SEEN")'"
[[ $(stat -c %i "$prom") != "$old_inode" ]] || fail "ibat.prom kept its inode: written in place, not renamed"
grep -qx 'ibat_resolves_total{device="mlx5_0",port="1"} 9' "$prom" || fail "second run's text is not in ibat.prom"
(($(leftovers) == 0)) || fail "temporary files left: $(ls -A "$work/dir")"
((failures == f)) && echo "ok: second run renames a new file over the old one"

# expect_kept NAME WANT_RC WANT_ERR_PATTERN [ENV=VALUE...]: a run that must leave ibat.prom alone.
expect_kept() {
  local name=$1 want_rc=$2 pattern=$3 f=$failures; shift 3
  local old old_inode
  old=$(<"$prom"); old_inode=$(stat -c %i "$prom")
  run "$@"
  [[ $RC == "$want_rc" ]] || fail "$name: exit $RC, expected $want_rc"
  one_line || fail "$name: stderr is not one line: '$ERR'"
  # shellcheck disable=SC2053
  [[ $ERR == $pattern ]] || fail "$name: stderr '$ERR' does not match '$pattern'"
  [[ $(<"$prom") == "$old" && $(stat -c %i "$prom") == "$old_inode" ]] || fail "$name: ibat.prom changed"
  (($(leftovers) == 0)) || fail "$name: temporary files left: $(ls -A "$work/dir")"
  ((failures == f)) && echo "ok: $name"
}

FAKE_OUT="$work/stats.prom" FAKE_ERR="ibat stats: cannot read statistics: ibatd closed the connection" FAKE_RC=3
expect_kept "ibat fails" 1 \
  "ibat-textfile: ibat stats exited 3: ibat stats: cannot read statistics: ibatd closed the connection; $prom left as it was"
FAKE_OUT="" FAKE_ERR="" FAKE_RC=0
expect_kept "ibat prints nothing" 1 "ibat-textfile: ibat stats printed nothing; $prom left as it was"
FAKE_OUT="$work/stats.prom" FAKE_HANG=1
expect_kept "ibatd wedged" 1 "ibat-textfile: ibatd did not answer within 1 s; $prom left as it was" IBAT_TEXTFILE_TIMEOUT=1
FAKE_HANG=0
expect_kept "bad timeout" 2 "ibat-textfile: IBAT_TEXTFILE_TIMEOUT='soon' is not a number of seconds above 0" \
  IBAT_TEXTFILE_TIMEOUT=soon

f=$failures
run IBAT_TEXTFILE_DIR="$work/missing"
[[ $RC == 2 ]] || fail "missing directory: exit $RC, expected 2"
if ! { one_line && [[ $ERR == "ibat-textfile: $work/missing is not a directory"* ]]; }; then
  fail "missing directory: stderr '$ERR'"
fi
((failures == f)) && echo "ok: missing directory"

# The real ibat with no ibatd at its socket: ibat's own line, the file kept.
mkdir "$work/real"
ln -s "$(realpath "$ibat_cli")" "$work/real/ibat"
f=$failures
old=$(<"$prom")
RC=0
ERR=$(IBAT_SOCKET="$work/none.sock" PATH="$work/real:$PATH" "$script" 2>&1 >/dev/null) || RC=$?
[[ $RC == 1 ]] || fail "real ibat without ibatd: exit $RC, expected 1"
if ! { one_line && [[ $ERR == "ibat-textfile: ibat stats exited "*"cannot connect to $work/none.sock"*"; $prom left as it was" ]]; }; then
  fail "real ibat without ibatd: stderr '$ERR'"
fi
[[ $(<"$prom") == "$old" ]] || fail "real ibat without ibatd: ibat.prom changed"
((failures == f)) && echo "ok: real ibat without ibatd"

# The packaged service and timer: systemd-analyze verify finds nothing (the service's ExecStart
# names this tree's script, as unit_verify_test.sh does for ibatd).
f=$failures
mkdir "$work/units"
sed "s|/usr/lib/ibat/ibat-textfile|$script|g" "$src/packaging/ibat-textfile.service" >"$work/units/ibat-textfile.service"
cp "$src/packaging/ibat-textfile.timer" "$work/units/"
grep -qx 'ExecStart=/usr/lib/ibat/ibat-textfile' "$src/packaging/ibat-textfile.service" ||
  fail "ibat-textfile.service does not run /usr/lib/ibat/ibat-textfile"
grep -qx 'Environment=IBAT_TEXTFILE_DIR=/var/lib/prometheus/node-exporter' "$src/packaging/ibat-textfile.service" ||
  fail "ibat-textfile.service does not default to Debian's textfile directory"
if ! out=$(systemd-analyze verify --man=no "$work/units/ibat-textfile.service" "$work/units/ibat-textfile.timer" 2>&1) ||
   [[ -n $out ]]; then
  fail "systemd-analyze verify ibat-textfile.service ibat-textfile.timer: $out"
fi
((failures == f)) && echo "ok: systemd-analyze verify of the service and timer"

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "textfile OK"
