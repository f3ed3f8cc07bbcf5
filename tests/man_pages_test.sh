#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# ctest `man_pages`: the man pages cannot drift from the programs, either way.
# What the programs have is in the man pages: every long option that `ibatd --help` prints must
# appear in ibatd(8); every command of `ibat --help` (and of its commands' own --help, e.g. `neigh
# add`) must have its section in ibat(1), and each long option of `ibat CMD --help` must appear in
# that section or in GLOBAL OPTIONS; every key of the packaged ibatd.toml (commented-out ones too)
# and each of its [tables] must appear in ibatd(8).
# What the man pages document exists in the programs: each long option of ibatd(8)'s SYNOPSIS,
# OPTIONS and `ibatd ...` EXAMPLES is one of `ibatd --help`; each command ibat(1) documents (its
# SYNOPSIS lines, its .SS sections under COMMANDS, its `ibat ...` example lines) is one of `ibat
# --help` (or of the command's own, for `neigh add`), and each long option named there, and in
# GLOBAL OPTIONS, is one of that command's --help or of `ibat --help`; each key and [table] of
# ibatd(8)'s CONFIGURATION (its tables' key lists, and every snake_case name there) is in the
# packaged ibatd.toml or in the config parser's key table (src/server/daemon/config.cpp, old
# names included).
# The help texts and the files are read as they are now, never from a copied list. Each missing or
# stale name is printed; exit 1 when any is.
# Usage: man_pages_test.sh IBATD IBAT SOURCE_DIR
set -euo pipefail
(($# == 3)) || { echo "usage: man_pages_test.sh IBATD IBAT SOURCE_DIR" >&2; exit 2; }
ibatd=$1 ibat=$2 src=$3
toml=$src/packaging/ibatd.toml man8=$src/packaging/ibatd.8 man1=$src/packaging/ibat.1
parser=$src/src/server/daemon/config.cpp
for f in "$toml" "$man8" "$man1" "$parser"; do [[ -r $f ]] || { echo "FAIL: cannot read $f" >&2; exit 1; }; done

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

# --- the other way: what ibatd(8) documents, ibatd has ---
# options_in TEXT: the long options TEXT names, one per line.
options_in() { grep -oE -- '--[a-z][a-z0-9-]*' <<<"$1" | sort -u || true; }
# one_of LIST WORD: WORD is a line of LIST.
one_of() { grep -qxF -- "$2" <<<"$1"; }

ibatd_options=$(long_options "$ibatd_help")
for part in SYNOPSIS OPTIONS EXAMPLES; do
  text=$(section "$man8_text" "$part")
  [[ $part != EXAMPLES ]] || text=$(grep -E '^ibatd( |$)' <<<"$text" || true)
  while read -r opt; do
    [[ -n $opt ]] || continue
    one_of "$ibatd_options" "$opt" || miss "ibatd(8) $part documents $opt, which ibatd --help does not have (stale)"
  done < <(options_in "$text")
done

# The config keys the parser reads: its key table's names and the old names it still accepts.
parser_keys=$( {
  grep -oE '(_key\(|KeySpec\{)"[a-z]*", "[a-z][a-z0-9_]*"' "$parser" | sed -E 's/.*"([a-z0-9_]+)"$/\1/'
  grep -oE '\{"[a-z]+", "[a-z][a-z0-9_]*", "[a-z][a-z0-9_]*"\}' "$parser" | cut -d'"' -f4
} | sort -u)
(($(wc -w <<<"$parser_keys") > 20)) || miss "found only $(wc -w <<<"$parser_keys") keys in $parser: has its key table changed shape?"
known_keys=$(printf '%s\n' "$keys" "$parser_keys" | sort -u)

# documented_keys CONFIGURATION_TEXT: "TABLE KEY" per key that a table's item (".TP" then ".B
# [table]") lists: its text with the roff requests' names, quoted strings and parenthesised
# remarks removed, a leading "Label:" and everything after its first sentence dropped, then split
# at commas and "and". A piece that is not a key name is printed as "TABLE ?PIECE".
documented_keys() {
  awk '
    function flush(   n, i, piece, pieces) {
      if (table == "") return
      gsub(/\[[^][()]*[])]/, "", body)  # lists and intervals, "[1, 1.5)" included
      while (gsub(/\([^()]*\)/, "", body)) {}
      sub(/^ *[A-Z][^:,]*: */, "", body)
      if (match(body, /\.( |$)/)) body = substr(body, 1, RSTART - 1)
      gsub(/ and /, ",", body)
      n = split(body, pieces, ",")
      for (i = 1; i <= n; i++) {
        piece = pieces[i]; gsub(/^ +| +$/, "", piece)
        if (piece == "") continue
        print table, (piece ~ /^[a-z][a-z0-9_]*$/ ? piece : "?" piece)
      }
      table = ""; body = ""
    }
    /^\.(TP|PP|SH|SS)/ { flush(); tag = ($0 ~ /^\.TP/); next }
    tag && /^\.B \[[a-z]+\]$/ { table = $2; tag = 0; next }
    { tag = 0 }
    table != "" { line = $0; sub(/^\.[A-Z]+ */, "", line); gsub(/"[^"]*"/, "", line); body = body " " line }
    END { flush() }' <<<"$1"
}
config_text=$(section "$man8_text" "CONFIGURATION")
listed=$(documented_keys "$config_text")
(($(wc -l <<<"$listed") > 20)) || miss "read only $(wc -l <<<"$listed") keys from ibatd(8)'s CONFIGURATION: has its format changed?"
while read -r table key; do
  [[ -n $key ]] || continue
  if [[ $key == \?* ]]; then
    miss "ibatd(8) CONFIGURATION lists '${key#\?}' under $table, which is not a key name (stale or misspelt)"
  else
    one_of "$known_keys" "$key" ||
      miss "ibatd(8) CONFIGURATION documents key $key under $table, which neither packaging/ibatd.toml nor the config parser has (stale)"
  fi
done <<<"$listed"
# Every snake_case name the section mentions (outside quoted examples), in any sentence, is a key.
listed_keys=$(cut -d' ' -f2 <<<"$listed")
while read -r key; do
  [[ -n $key ]] || continue
  one_of "$listed_keys" "$key" || one_of "$known_keys" "$key" ||
    miss "ibatd(8) CONFIGURATION names $key, which neither packaging/ibatd.toml nor the config parser has as a key (stale)"
done < <(sed -E 's/"[^"]*"//g' <<<"$config_text" |
         grep -oE '(^|[^A-Za-z0-9_$./-])[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]' | sed -E 's/^[^a-z]//' | sort -u || true)
known_tables=$( { printf '%s\n' "$tables"; grep -oE '"[a-z]+"' <<<"$(grep -E '^constexpr .* kSections' "$parser")" | tr -d '"'; } | sort -u)
while read -r table; do
  [[ -n $table ]] || continue
  one_of "$known_tables" "$table" ||
    miss "ibatd(8) CONFIGURATION documents table [$table], which neither packaging/ibatd.toml nor the config parser has (stale)"
done < <(grep -oE '\[[a-z]+\]' <<<"$config_text" | tr -d '[]' | sort -u || true)

# --- the other way: what ibat(1) documents, ibat has ---
global_options=$(long_options "$ibat_help")
while read -r opt; do
  [[ -n $opt ]] || continue
  one_of "$global_options" "$opt" || miss "ibat(1) GLOBAL OPTIONS documents $opt, which ibat --help does not have (stale)"
done < <(options_in "$global")

# command_of WORDS...: the command (one or two words, as "neigh add") that WORDS start with, as
# ibat's help lists them; empty when the first word is no command of `ibat --help`.
command_of() {
  local first=$1 second=${2:-}
  one_of "$(subcommands "$ibat_help")" "$first" || return 0
  if [[ -n $second ]] && one_of "$(subcommands "$("$ibat" "$first" --help)")" "$second"; then
    echo "$first $second"
  else
    echo "$first"
  fi
}
# check_documented WHERE COMMAND TEXT: COMMAND (as the page writes it) is one of ibat's, and each
# long option TEXT names is one of its --help or a global one.
check_documented() {
  local where=$1 cmd=$2 text=$3 known opt help
  # shellcheck disable=SC2086 # the command's words are separate arguments
  if [[ $(command_of $cmd) != "$cmd" ]]; then
    miss "ibat(1) $where documents command '$cmd', which ibat --help does not list (stale)"
    return
  fi
  # shellcheck disable=SC2086
  help=$("$ibat" $cmd --help) || { miss "ibat $cmd --help exits $?"; return; }
  known=$(printf '%s\n%s\n' "$(long_options "$help")" "$global_options")
  while read -r opt; do
    [[ -n $opt ]] || continue
    one_of "$known" "$opt" || miss "ibat(1) $where documents $opt for '$cmd', which ibat $cmd --help does not have (stale)"
  done < <(options_in "$text")
}

# SYNOPSIS: one block per command, ".br" between them; the command is the ".B" words after "ibat".
documented=0
synopsis=$(section "$man1_text" "SYNOPSIS")
while IFS= read -r -d '' block; do
  cmd=$(awk '/^\.B ibat$/ { on = 1; next } on && /^\.B [a-z][a-z -]*$/ { sub(/^\.B /, ""); print; exit }' <<<"$block")
  [[ -n $cmd ]] || { miss "an ibat(1) SYNOPSIS line names no command: $(tr '\n' ' ' <<<"$block")"; continue; }
  documented=$((documented + 1))
  check_documented "SYNOPSIS" "$cmd" "$block"
done < <(awk '/^\.br$/ { printf "%s", block "\0"; block = ""; next } { block = block $0 "\n" } END { printf "%s", block "\0" }' <<<"$synopsis")
((documented > 5)) || miss "read only $documented commands from ibat(1)'s SYNOPSIS: has its format changed?"

# COMMANDS: each .SS section ("neigh add IP HWADDR": the command is its leading lower-case words).
while read -r title; do
  cmd=$(grep -oE '^[a-z][a-z-]*( [a-z][a-z-]*)?' <<<"$title")
  check_documented "section '$title'" "$cmd" "$(section "$man1_text" "$title")"
done < <(awk '/^\.SH / { on = ($0 == ".SH COMMANDS"); next } on && /^\.SS / { sub(/^\.SS /, ""); gsub(/"/, ""); print }' "$man1")

# Examples: each line "ibat CMD ..." of a display (.nf to .fi; after a "$ " or "# " prompt or
# none), up to a pipe, redirection or another command.
while read -r line; do
  line=${line%%[|;>&]*}
  # shellcheck disable=SC2086 # the line's words
  set -- ${line#ibat }
  while [[ ${1:-} == -* ]]; do shift; [[ ${1:-} == -* || -z ${1:-} ]] || shift; done  # global options
  cmd=$(command_of "${1:-}" "${2:-}")
  [[ -n $cmd ]] || { miss "ibat(1) example 'ibat ${1:-}' names no command of ibat --help (stale)"; continue; }
  check_documented "example '$line'" "$cmd" "$line"
done < <(awk '/^\.nf/ { on = 1; next } /^\.fi/ { on = 0 } on' <<<"$man1_text" | sed -nE 's/^([$#] )?(ibat( .*)?)$/\2/p')

if ((missing > 0)); then
  echo "$missing name(s) missing from the man pages or stale in them (packaging/ibatd.8, packaging/ibat.1)" >&2
  exit 1
fi
echo "ok: ibatd(8) and ibat(1) name every option of ibatd and ibat ($commands commands) and every key of ibatd.toml," \
  "and every option, command and key they document exists"
