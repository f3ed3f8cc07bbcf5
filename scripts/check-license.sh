#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Fails (exit 1) when a tracked source file (C, C++, shell, Python, CMake, make) lacks the
# project's SPDX line in its first three lines, and prints each such file; COPYING says why.
# Exit 2 when REPO_DIR is not a git repository.
# Usage: scripts/check-license.sh [REPO_DIR]   (default: the repository holding this script)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
spdx='SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB'
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || { echo "check-license: $repo is not a git repository" >&2; exit 2; }
missing=()
while IFS= read -r f; do
  case "$f" in
    *.cpp|*.h|*.c|*.sh|*.py|*.cmake|*CMakeLists.txt|Makefile) ;;
    *) head -c2 "$repo/$f" 2>/dev/null | grep -q '#!' || continue ;;  # other scripts by their shebang
  esac
  head -n 3 "$repo/$f" | grep -qF "$spdx" || missing+=("$f")
done < <(git -C "$repo" ls-files)
if ((${#missing[@]})); then
  echo "check-license: ${#missing[@]} source file(s) lack '$spdx' in their first 3 lines:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "check-license: add it as the first line (after a #! line), as every other source file has it" >&2
  exit 1
fi
echo "check-license: every tracked source file carries the SPDX line"
