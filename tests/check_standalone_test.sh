#!/usr/bin/env bash
# ctest `standalone`: the repository refers to nothing outside itself (scripts/check-standalone.sh),
# and the check does catch such references: in tracked files only, with file:line, exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=$root/scripts/check-standalone.sh
fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$root" || fail "the repository refers outside itself (above)"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git -C "$tmp" init -q
mkdir -p "$tmp/scripts"
# Spelt in pieces so that this file does not trip the check itself.
beside='..'/shared absolute=/work'/'shared
printf 'fine\nsee %s/topologies\n' "$beside" >"$tmp/a.md"
printf '// from %s/DESIGN.md\n' "$absolute" >"$tmp/b.cpp"
cp "$check" "$tmp/scripts/check-standalone.sh"
printf '%s\n' "$beside" >"$tmp/untracked.txt"
git -C "$tmp" add a.md b.cpp scripts/check-standalone.sh
rc=0; err=$("$check" "$tmp" 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc on a repository with outside references, expected 1: $err"
for want in "a.md:2:see $beside/topologies" "b.cpp:1:// from $absolute/DESIGN.md"; do
  [[ $err == *"$want"* ]] || fail "'$want' not listed in: $err"
done
[[ $err != *untracked.txt* && $err != *check-standalone.sh:* ]] ||
  fail "untracked file or the script itself listed: $err"
echo "ok: outside references are listed with file:line (tracked files only), exit 1"

plain=$(mktemp -d); trap 'rm -rf "$tmp" "$plain"' EXIT
rc=0; GIT_CEILING_DIRECTORIES=$(dirname "$plain") "$check" "$plain" >/dev/null 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "exit $rc outside a git repository, expected 2"
echo "ok: a folder that is no git repository gives exit 2"
