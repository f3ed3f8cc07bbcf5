#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Fails (exit 1) when a tracked file refers to something a clone of the repository does not have:
# the team's reference folder beside it (by relative or absolute path), the design brief kept there (DESIGN.md,
# "DESIGN §N") or its other documents, or issue numbers. Prints every such file:line. What the
# repository's own documents say is in docs/ (docs/design.md for the design).
# Exit 2 when REPO_DIR is not a git repository.
# Usage: scripts/check-standalone.sh [REPO_DIR]   (default: the repository holding this script)
# Runs first in `make test` and in CI (.ci/run), and as the ctest `standalone`.
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
# Regular expressions (grep -E), one per kind of outside reference.
patterns=(
  '\.\./shared'             # the folder beside the repository
  '/work/shared'            # the same folder by its absolute path
  '\bDESIGN(\.md)?\b'       # the design brief there (the repository's own is docs/design.md)
  'linux-integration\.md'   # another document there
  '\b[Ii]ssues? [0-9]+'     # issue numbers: name the docs/ file that says what is meant
)
args=()
for p in "${patterns[@]}"; do args+=(-e "$p"); done
# This script names the patterns itself; it is the one file not checked.
rc=0
hits=$(git -C "$repo" grep -n -I -E "${args[@]}" -- . ':(exclude)scripts/check-standalone.sh') || rc=$?
case $rc in
  0) echo "check-standalone: tracked files refer to things outside the repository:" >&2
     echo "$hits" >&2
     echo "check-standalone: put what they need into the repository (e.g. lab/topologies/, docs/)" \
          "and point at that instead" >&2
     exit 1 ;;
  1) echo "check-standalone: no tracked file refers outside the repository" ;;
  *) echo "check-standalone: git grep failed in $repo (exit $rc); is it a git repository?" >&2
     exit 2 ;;
esac
