#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# ctest `man_pages`: the man pages cannot drift from the programs. Every long option that
# `ibatd --help` prints must appear in ibatd(8); every command of `ibat --help` (and of its
# commands' own --help, e.g. `neigh add`) must have its section in ibat(1), and each long option
# of `ibat CMD --help` must appear in that section or in GLOBAL OPTIONS; every key of the packaged
# ibatd.toml (commented-out ones too) and each of its [tables] must appear in ibatd(8). The help
# texts and the file are read as they are now, never from a copied list. Each missing name is
# printed; exit 1 when any is.
# Usage: man_pages_test.sh IBATD IBAT SOURCE_DIR
set -euo pipefail
(($# == 3)) || { echo "usage: man_pages_test.sh IBATD IBAT SOURCE_DIR" >&2; exit 2; }
ibatd=$1 ibat=$2 src=$3
toml=$src/packaging/ibatd.toml man8=$src/packaging/ibatd.8 man1=$src/packaging/ibat.1
for f in "$toml" "$man8" "$man1"; do [[ -r $f ]] || { echo "FAIL: cannot read $f" >&2; exit 1; }; done

missing=0
miss() { echo "FAIL: $*" >&2; missing=$((missing + 1)); }

# plain FILE: the roff text with its escapes undone (\- and \(hy are '-', font changes and
# zero-width escapes go), so that "\-\-cache\-only" reads "--cache-only".
plain() {
  sed -e 's/\\-/-/g' -e 's/\\(hy/-/g' -e 's/\\(em/ /g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
      -e 's/\\&//g' -e 's/\\c$//' -e 's/\\ / /g' "$1"
}

# has TEXT WORD: WORD appears in TEXT as a whole name (not inside a longer option or key).
has() { grep -qE -- "(^|[^A-Za-z0-9_-])$(sed 's/[.[\*^$]/\\&/g' <<<"$2")([^A-Za-z0-9_-]|$)" <<<"$1"; }

# long_options HELP_TEXT: the long options a --help text defines (its indented "-h,--help" and
# "--socket PATH" lines; not options its descriptions or footer mention), one per line.
long_options() {
  sed -nE 's/^[[:space:]]+(-[A-Za-z0-9],)?(--[a-z][a-z0-9-]*).*/\2/p' <<<"$1" | sort -u
}

# subcommands HELP_TEXT: the names under CLI11's "Subcommands:" heading.
subcommands() {
  awk 'tolower($0) ~ /^subcommands:?$/ { on = 1; next } on && /^[^ ]/ { on = 0 } on && /^  [a-z]/ { print $1 }' <<<"$1"
}

# section TEXT TITLE: the lines of ".SS TITLE ..." (or ".SH TITLE") up to the next .SS or .SH.
section() {
  awk -v t="$2" '
    /^\.S[HS] / { name = $0; sub(/^\.S[HS] /, "", name); gsub(/"/, "", name)
                  on = (name == t || index(name, t " ") == 1); next }
    on { print }' <<<"$1"
}

man8_text=$(plain "$man8")
man1_text=$(plain "$man1")

# --- ibatd(8): its options ---
ibatd_help=$("$ibatd" --help) || { echo "FAIL: $ibatd --help exits $?" >&2; exit 1; }
n=0
while read -r opt; do
  n=$((n + 1))
  has "$man8_text" "$opt" || miss "ibatd option $opt (ibatd --help) is missing from ibatd(8)"
done < <(long_options "$ibatd_help")
((n > 5)) || miss "ibatd --help named only $n long options: is its format still CLI11's?"

# --- ibatd(8): every key and table of the packaged ibatd.toml ---
keys=$(sed -nE 's/^[[:space:]]*#?[[:space:]]*([a-z][a-z0-9_]*)[[:space:]]*=.*/\1/p' "$toml" | sort -u)
tables=$(sed -nE 's/^[[:space:]]*#?[[:space:]]*\[([a-z][a-z0-9_.]*)\][[:space:]]*$/\1/p' "$toml" | sort -u)
(($(wc -w <<<"$keys") > 20)) || miss "found only $(wc -w <<<"$keys") keys in $toml"
for key in $keys; do
  has "$man8_text" "$key" || miss "config key $key (packaging/ibatd.toml) is missing from ibatd(8)"
done
for table in $tables; do
  grep -qF "[$table]" <<<"$man8_text" || miss "config table [$table] (packaging/ibatd.toml) is missing from ibatd(8)"
done

# --- ibat(1): its commands, each with its options ---
ibat_help=$("$ibat" --help) || { echo "FAIL: $ibat --help exits $?" >&2; exit 1; }
global=$(section "$man1_text" "GLOBAL OPTIONS")
while read -r opt; do
  has "$global" "$opt" || miss "ibat global option $opt (ibat --help) is missing from GLOBAL OPTIONS in ibat(1)"
done < <(long_options "$ibat_help")

commands=0
# check_command "neigh add": its section in ibat(1) names each of its options; then its subcommands.
check_command() {
  local cmd=$1 help text sub opt
  # shellcheck disable=SC2086 # the command's words are separate arguments
  help=$("$ibat" $cmd --help) || { miss "ibat $cmd --help exits $?"; return; }
  commands=$((commands + 1))
  text=$(section "$man1_text" "$cmd")
  if [[ -z $text ]]; then
    # a command with subcommands may be documented by them alone (".SS neigh add IP HWADDR")
    [[ -n $(subcommands "$help") ]] || miss "ibat command '$cmd' has no section (.SS $cmd) in ibat(1)"
  fi
  while read -r opt; do
    [[ -n $opt ]] || continue
    has "$text" "$opt" || has "$global" "$opt" ||
      miss "ibat $cmd option $opt (ibat $cmd --help) is missing from the '$cmd' section of ibat(1)"
  done < <(long_options "$help")
  for sub in $(subcommands "$help"); do check_command "$cmd $sub"; done
}
for cmd in $(subcommands "$ibat_help"); do check_command "$cmd"; done
((commands > 5)) || miss "ibat --help named only $commands commands: is its format still CLI11's?"

if ((missing > 0)); then
  echo "$missing name(s) missing from the man pages (packaging/ibatd.8, packaging/ibat.1)" >&2
  exit 1
fi
echo "ok: ibatd(8) and ibat(1) name every option of ibatd and ibat ($commands commands) and every key of ibatd.toml"
