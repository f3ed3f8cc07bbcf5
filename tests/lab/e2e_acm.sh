#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.acm: the real ib_acme (Debian ibacm) against ibatd's ACM endpoint on the lab: resolves by GID
# and by LID print the DLID saquery gives, an unknown GID fails with ENODATA, and `ib_acme -P`
# prints the counters that `ibat stats --json` reports.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
ACME=$(command -v ib_acme) || fail "ib_acme not installed (Debian package ibacm)"
name=$(lab_name e2eacm)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0002
sgid=$(host "$name" $src gid) slid=$(host "$name" $src lid)
acm=$E2E_DIR/acm.sock
start_ibatd "$name" $src d --acm-socket "$acm"
wait_resolving d "$(host "$name" h0009 gid)"
[[ -S $acm ]] || fail "no ACM socket at $acm"

# printed_dlid OUTPUT: the value of ib_acme's "  dlid: N" line
printed_dlid() { sed -n 's/^  dlid: \([0-9]*\)$/\1/p' <<<"$1"; }

for dest in h0009 h0014 h0028; do
  dgid=$(host "$name" $dest gid)
  want=$(jq_py "$(saquery_path "$name" $src "$sgid" "$dgid")" 'j["dlid"]')
  out=$("$ACME" -S "$acm" -f g -s "$sgid" -d "$dgid") || fail "ib_acme -f g -d $dgid: exit $?: $out"
  expect_contains "ib_acme -f g ($dest)" "$out" "return status 0x0"
  expect_eq "ib_acme -f g -d $dgid: dlid ($dest)" "$(printed_dlid "$out")" "$want"
done

dest=h0017 dlid=$(host "$name" h0017 lid)
out=$("$ACME" -S "$acm" -f l -s "$slid" -d "$dlid") || fail "ib_acme -f l -d $dlid: exit $?: $out"
expect_eq "ib_acme -f l -s $slid -d $dlid: dlid ($dest)" "$(printed_dlid "$out")" "$dlid"
expect_contains "ib_acme -f l: dgid of $dest" "$out" "dgid: $(host "$name" h0017 gid)"

rc=0
out=$("$ACME" -S "$acm" -f g -s "$sgid" -d fe80::10:dead 2>&1) || rc=$?
expect_eq "ib_acme exit code for an unknown GID" "$rc" 255
expect_contains "ib_acme unknown GID" "$out" "No data available"

out=$("$ACME" -S "$acm" -P) || fail "ib_acme -P: exit $?: $out"
stats=$(cli d stats --json)
python3 - "$out" "$stats" "$acm" <<'PY' || fail "ib_acme -P counters differ from ibat stats: $out / $stats"
import json, sys
out, stats, acm = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
lines = out.splitlines()
head = next(i for i, l in enumerate(lines) if l.startswith("svc,"))
labels, values = lines[head].split(","), lines[head + 1].split(",")
assert values[0] == acm, values
got = dict(zip(labels[1:], map(int, values[1:])))
want = {"Resolve Count": stats["resolves"], "Route Query Count": stats["sa_queries"],
        "Route Cache Count": stats["cache_hits"]}
diff = {k: (got[k], v) for k, v in want.items() if got[k] != v}
assert not diff, f"(ib_acme, stats): {diff}"
assert got["No Data"] >= 1, got
print(got)
PY
pass "ib_acme -P counters equal ibat stats (resolves, sa_queries, cache_hits), No Data >= 1"
expect_contains "ib_acme -P" "$out" "return status 0x0"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
