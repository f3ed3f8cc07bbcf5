#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# ctest `man_pages_stale`: man_pages_test.sh fails on a stale man page. It copies the two man
# pages, the packaged ibatd.toml and the config parser into a temporary directory, writes into
# the copies one entry of each kind that the programs do not have (an ibatd option, a config key,
# a config table, an ibat global option, command and command option, an example's option), runs
# man_pages_test.sh on them and checks that it exits 1 naming each. The repository is not touched.
# Usage: man_pages_stale_test.sh IBATD IBAT SOURCE_DIR
set -euo pipefail
(($# == 3)) || { echo "usage: man_pages_stale_test.sh IBATD IBAT SOURCE_DIR" >&2; exit 2; }
ibatd=$1 ibat=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/packaging" "$work/src/server/daemon"
cp "$src/packaging/ibatd.8" "$src/packaging/ibat.1" "$src/packaging/ibatd.toml" "$work/packaging/"
cp "$src/src/server/daemon/config.cpp" "$work/src/server/daemon/"
man8=$work/packaging/ibatd.8 man1=$work/packaging/ibat.1

# plant FILE SED_SCRIPT: edits FILE, and fails when the edit changed nothing (the page moved on).
plant() {
  local before
  before=$(cat "$1")
  sed -i "$2" "$1"
  [[ $(cat "$1") != "$before" ]] || { echo "FAIL: cannot plant '$2' in $1: edit this test" >&2; exit 1; }
}
plant "$man8" '/^\.SH OPTIONS$/a .TP\n.B \\-\\-stale\\-option\nAn option ibatd does not have.'
plant "$man8" 's/^cache_file, interval_s /cache_file, stale_key_ms, interval_s /'
plant "$man8" 's/^\.BR \[policy\] ", " \[fabric\]/.BR [policy] ", " [staletable] ", " [fabric]/'
plant "$man1" '/^\.SH GLOBAL OPTIONS$/a .TP\n.B \\-\\-stale\\-global\nA global option ibat does not have.'
plant "$man1" '/^\.SH COMMANDS$/a .SS stalecmd\nA command ibat does not have.'
plant "$man1" '/^\.SS paths$/a .B \\-\\-stale\\-paths\nan option of paths that it does not have.'
plant "$man1" 's/^\$ ibat resolve \\-\\-ip 10\.0\.0\.7$/& \\-\\-stale\\-example/'

if out=$(bash "$(dirname "$0")/man_pages_test.sh" "$ibatd" "$ibat" "$work" 2>&1); then
  echo "FAIL: man_pages_test.sh passed man pages with stale entries:" >&2
  echo "$out" >&2
  exit 1
fi
failed=0
for name in "ibatd(8) OPTIONS documents --stale-option" "documents key stale_key_ms" "table [staletable]" \
  "GLOBAL OPTIONS documents --stale-global" "documents command 'stalecmd'" "documents --stale-paths for 'paths'" \
  "documents --stale-example for 'resolve'"; do
  grep -qF -- "$name" <<<"$out" || { echo "FAIL: man_pages_test.sh did not name: $name" >&2; failed=1; }
done
((failed == 0)) || { echo "$out" >&2; exit 1; }
echo "ok: man_pages_test.sh fails on each stale entry and names it"
