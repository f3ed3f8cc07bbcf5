#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Runs every libFuzzer target in BUILD_DIR/bin for FUZZ_SECONDS each, starting from its seed corpus
# (tests/fuzz/corpus/<name>). A crash fails the run and leaves the reproducer in fuzz-artifacts/.
set -euo pipefail
build_dir=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
fuzzers=("$build_dir"/bin/fuzz_*)
if ((${#fuzzers[@]} == 0)); then
  echo "fuzz-smoke: no fuzz targets in $build_dir/bin (build with: cmake --build --preset fuzz --target fuzzers)" >&2
  exit 1
fi
mkdir -p "$root/fuzz-artifacts"
passed=0 failed=0
for f in "${fuzzers[@]}"; do
  name=${f##*/fuzz_}
  seeds="$root/tests/fuzz/corpus/$name"
  work=$(mktemp -d)
  [[ -d $seeds ]] && cp -r "$seeds"/. "$work"/ 2>/dev/null || true
  if "$f" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$root/fuzz-artifacts/${name}-" "$work" >"$work.log" 2>&1; then
    echo "fuzz-smoke: $name ok ($(grep -o 'cov: [0-9]*' "$work.log" | tail -1))"
    passed=$((passed + 1))
  else
    echo "fuzz-smoke: $name FAILED; log tail:" >&2
    tail -40 "$work.log" >&2
    failed=$((failed + 1))
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
