#!/usr/bin/env bash
# Runs the benchmark binaries of the release build (`make bench`). Extra arguments are passed to
# each binary (e.g. --benchmark_filter=CacheHit). To add a suite, append its binary to BENCHES.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-build/bin}
BENCHES=(
  ibat-bench-core
)
for bench in "${BENCHES[@]}"; do
  echo "== $bench"
  "$BIN_DIR/$bench" "$@"
done
