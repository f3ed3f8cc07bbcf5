#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The packaged monitoring files against what `ibat stats --prometheus` emits.
#   rules:     packaging/prometheus/ibat-alerts.yml passes `promtool check rules`; `promtool test
#              rules` of tests/package/prometheus/ibat-alerts_test.yml (series in, alerts out) passes;
#              every ibat_ name in its expressions is one the renderer emits.
#   dashboard: packaging/grafana/ibat-dashboard.json is JSON, each panel has targets, and every
#              ibat_ name in its expressions and variables is one the renderer emits.
# Both also check that the name check fails on a copy with a misspelt name.
#   usage: monitoring_test.sh SOURCE_DIR rules|dashboard
set -uo pipefail
src=${1:?usage: monitoring_test.sh SOURCE_DIR rules|dashboard}
what=${2:?usage: monitoring_test.sh SOURCE_DIR rules|dashboard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
names() { python3 "$src/tests/package/metric_names.py" "$src/src/cli/render.cpp" "$src/packaging/ibat-textfile" "$@"; }

case $what in
  rules)
    file="$src/packaging/prometheus/ibat-alerts.yml"
    if out=$(promtool check rules "$file" 2>&1); then echo "ok: promtool check rules ($out)" | tr '\n' ' '; echo
    else fail "promtool check rules: $out"; fi
    if out=$(cd "$src/tests/package/prometheus" && promtool test rules ibat-alerts_test.yml 2>&1); then
      echo "ok: promtool test rules"
    else
      fail "promtool test rules: $out"
    fi
    # Every alert of the file is exercised by the unit test.
    while read -r alert; do
      grep -q "alertname: $alert\$" "$src/tests/package/prometheus/ibat-alerts_test.yml" ||
        fail "alert $alert has no test in ibat-alerts_test.yml"
    done < <(sed -n 's/^ *- alert: //p' "$file")
    ;;
  dashboard)
    file="$src/packaging/grafana/ibat-dashboard.json"
    ;;
  *) echo "usage: monitoring_test.sh SOURCE_DIR rules|dashboard" >&2; exit 2 ;;
esac

if out=$(names "$file" 2>&1); then echo "ok: $out"; else fail "metric names: $out"; fi

# The check itself: a misspelt name (ibat_resolves_total -> ibat_resolve_total) must fail, naming it.
bad="$work/$(basename "$file")"
sed 's/ibat_resolves_total/ibat_resolve_total/g' "$file" >"$bad"
cmp -s "$file" "$bad" && fail "$(basename "$file") does not use ibat_resolves_total: the misspelling check checks nothing"
if out=$(names "$bad" 2>&1); then
  fail "a misspelt ibat_resolve_total passed the metric name check"
elif [[ $out != *"ibat_resolve_total is not a series of ibat stats --prometheus"* ]]; then
  fail "the check of a misspelt name says: $out"
else
  echo "ok: a misspelt name fails the check"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "$what OK"
