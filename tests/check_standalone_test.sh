#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# ctest `standalone`: the repository refers to nothing outside itself (scripts/check-standalone.sh),
# and the check does catch such references (the folder beside it, its documents, issue numbers):
# in tracked files only, with file:line, exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=$root/scripts/check-standalone.sh
fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$root" || fail "the repository refers outside itself (above)"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git -C "$tmp" init -q
mkdir -p "$tmp/scripts"
# Spelt in pieces so that this file does not trip the check itself.
beside='..'/shared absolute=/work'/'shared brief=DESI'GN' issue=iss'ue'
printf 'fine\nsee %s/topologies\n' "$beside" >"$tmp/a.md"
printf '// from %s/notes.md\n' "$absolute" >"$tmp/b.cpp"
printf '# docs/design.md is fine\n# %s.md §3\n# as %s §4 says\n# %s 5 asked\n' "$brief" "$brief" "$issue" >"$tmp/c.cmake"
cp "$check" "$tmp/scripts/check-standalone.sh"
printf '%s\n' "$beside" >"$tmp/untracked.txt"
git -C "$tmp" add a.md b.cpp c.cmake scripts/check-standalone.sh
rc=0; err=$("$check" "$tmp" 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc on a repository with outside references, expected 1: $err"
for want in "a.md:2:see $beside/topologies" "b.cpp:1:// from $absolute/notes.md" \
            "c.cmake:2:# $brief.md §3" "c.cmake:3:# as $brief §4 says" "c.cmake:4:# $issue $((4 + 1)) asked"; do
  [[ $err == *"$want"* ]] || fail "'$want' not listed in: $err"
done
[[ $err != *untracked.txt* && $err != *check-standalone.sh:* && $err != *c.cmake:1:* ]] ||
  fail "untracked file, the script itself or docs/design.md listed: $err"
echo "ok: outside references are listed with file:line (tracked files only), exit 1"

plain=$(mktemp -d); trap 'rm -rf "$tmp" "$plain"' EXIT
rc=0; GIT_CEILING_DIRECTORIES=$(dirname "$plain") "$check" "$plain" >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "exit $rc outside a git repository, expected 2"
echo "ok: a folder that is no git repository gives exit 2"
