#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# bench-ab.sh BEFORE [ROUNDS]: ibat-bench (end to end through ibatd on the lab) of commit BEFORE and
# of the working tree, on this machine, taking turns ROUNDS times (default 3) so that a change of
# load hits both alike. Builds BEFORE's release binaries in a git worktree under /tmp (kept for
# the next run). Prints one JSON object: each side's medians and after/before ratios of the
# hit-path figures (shared-table single and batch hits against the bare map, socket pipelined
# cached resolves, one-at-a-time p99).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: scripts/bench-ab.sh COMMIT [ROUNDS]}
rounds=${2:-3}
commit=$(git rev-parse --verify "$before^{commit}")
tree=/tmp/ibat-bench-before-${commit:0:12}
[[ -d $tree ]] || git worktree add --detach "$tree" "$commit" >/dev/null
targets=(ibatd ibat_cli ibat-bench)
build() { (cd "$1" && cmake --preset release >/dev/null && cmake --build build --target "${targets[@]}" >/dev/null); }
build "$tree"
build .
out=$(mktemp -d /tmp/ibat-bench-ab.XXXXXX)
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    dir=$([[ $side == before ]] && echo "$tree" || echo "$PWD")
    BENCHES=ibat-bench BIN_DIR=$dir/build/bin bash scripts/bench.sh >"$out/$side-$round.log" 2>&1 ||
      { echo "bench-ab: $side round $round failed: $(tail -5 "$out/$side-$round.log")" >&2; exit 1; }
    cp "$dir/build/ibat-bench.json" "$out/$side-$round.json"
  done
done
python3 - "$out" "$rounds" "$commit" "$(git rev-parse --short HEAD)" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
keys = ["table_resolves_per_s", "bare_map_table_ratio", "table_batch_resolves_per_s", "bare_map_table_batch_ratio",
        "cached_resolves_per_s", "p50_us", "p99_us"]
side = {s: [json.load(open(f"{out}/{s}-{r}.json")) for r in range(1, rounds + 1)] for s in ("before", "after")}
med = {s: {k: statistics.median(run[k] for run in side[s]) for k in keys} for s in side}
print(json.dumps({"before": sys.argv[3][:12], "after": "working tree at " + sys.argv[4], "rounds": rounds,
                  "median": med, "after_over_before": {k: round(med["after"][k] / med["before"][k], 3) if med["before"][k] else None for k in keys},
                  "runs": side}, indent=1))
PY
