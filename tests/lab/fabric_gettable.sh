#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.gettable: on fattree-32 (OpenSM through the umad twin's RMPP), `ibat-probe --table` from
# h0003 gets one PathRecord GetTable of 38 records (32 HCA ports, its own included, and the 6
# switches' port 0, which it leaves out by the switches' NodeRecords): one path to every HCA port,
# each equal to saquery's SGID-only table, a sample also to saquery's query of the pair (DLID, SL,
# MTU, rate, packet lifetime), with the GetTable counters; a GET from the same port still works;
# an answer over --max-records (read whole, or over the receive bound and cut) is refused at once.
# Under umad2sim (no RMPP) --table refuses before sending anything and GETs work as before.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name fgt)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
out=$FABRIC_ENV_CACHE
src=h0003
"$LAB" hosts --name "$name" --json >"$out/hosts"
sgid=$(gid_of "$name" $src)

on_node "$name" $src "$PROBE" --table --json >"$out/table" || fail "ibat-probe --table failed: $(tail -2 "$out/table")"
on_node "$name" $src saquery -p --sgid "$sgid" -r 1 -n 1 >"$out/sa_table" || fail "saquery GetTable failed"
# A sample, each pair asked alone: a host on the same leaf, one a 1x link away, one across the spines.
sample=(h0000 h0004 h0013 h0027 h0031)
for dst in "${sample[@]}"; do
  echo "== $(gid_of "$name" $dst)" >>"$out/sa_pairs"
  on_node "$name" $src saquery -p --sgid-to-dgid "$sgid-$(gid_of "$name" $dst)" >>"$out/sa_pairs" ||
    fail "saquery $src -> $dst failed"
done

python3 - "$out/hosts" "$out/table" "$out/sa_table" "$out/sa_pairs" "$sgid" <<'PY'
import json, re, sys
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
FIELDS = ("dlid", "slid", "sl", "mtu", "rate", "pkt_life")
hosts_file, table_file, sa_table_file, sa_pairs_file, sgid = sys.argv[1:]

def saquery_records(text):
    records = {}
    for block in text.split("PathRecord dump:")[1:]:
        f = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", block, re.M))
        records[f["dgid"]] = {"dlid": int(f["dlid"]), "slid": int(f["slid"]), "sl": int(f["sl"], 16),
                              "mtu": MTU[int(f["mtu"], 16) & 0x3F], "rate": RATE[int(f["rate"], 16) & 0x3F],
                              "pkt_life": int(f["pkt_life"], 16) & 0x3F, "sgid": f["sgid"]}
    return records

hcas = {h["gid"] for h in json.load(open(hosts_file))}
lines = [json.loads(l) for l in open(table_file)]
paths = [l for l in lines if "dgid" in l]
summary = lines[-1]["table"]
sa = saquery_records(open(sa_table_file).read())
switches = set(sa) - hcas

assert len(hcas) == 32 and len(sa) == 38 and len(switches) == 6, (len(hcas), len(sa), sorted(switches))
assert summary["result"] == "ok", summary
assert (summary["records"], summary["paths"], summary["switch_ports"], summary["extra_paths"]) == (38, 32, 6, 0), summary
assert summary["switches_known"] is True, summary
got = {p["dgid"] for p in paths}
assert len(paths) == len(got) == 32, f"{len(paths)} records, {len(got)} DGIDs"
assert got == hcas, f"missing {sorted(hcas - got)}, extra {sorted(got - hcas)}"
assert not got & switches, sorted(got & switches)
others = got - {sgid}
assert len(others) == 31, len(others)
bad = [(p["dgid"], {k: p[k] for k in FIELDS}, {k: sa[p["dgid"]][k] for k in FIELDS})
       for p in paths if p["sgid"] != sgid or {k: p[k] for k in FIELDS} != {k: sa[p["dgid"]][k] for k in FIELDS}]
assert not bad, "\n".join(map(str, bad[:5]))
rates = sorted({p["rate"] for p in paths})
assert len(rates) > 1, f"expected different rates (1x links), got {rates}"

by_dgid = {p["dgid"]: p for p in paths}
pairs = 0
for block in open(sa_pairs_file).read().split("== ")[1:]:
    head, body = block.split("\n", 1)
    want = saquery_records(body)[head]
    got_pair = {k: by_dgid[head][k] for k in FIELDS}
    assert got_pair == {k: want[k] for k in FIELDS}, (head, got_pair, want)
    pairs += 1
assert pairs == 5, pairs

stats = summary["stats"]
assert stats["sa_gettables_sent"] == 2 and stats["sa_gettables_answered"] == 2, stats
assert stats["sa_table_records"] == 38 + 6, stats
assert stats["sa_table_bytes"] == (38 * 64 + 56) + (6 * 112 + 56), stats
assert stats["oversized_mads"] == 0 and stats["invalid_responses"] == 0, stats
print(f"32 paths (31 other HCAs + its own), 6 switch ports left out, equal to saquery's table; "
      f"{pairs} pairs equal to saquery's own query; rates {rates}")
PY
pass "ibat-probe --table: a path to every HCA port from one GetTable, equal to saquery's"

dst=h0027
get=$(on_node "$name" $src "$PROBE" --dgid "$(gid_of "$name" $dst)" --json) || fail "GET $src -> $dst failed: $get"
expect_eq "GET $src -> $dst DLID" "$(json_field "$get" dlid)" "$(host_field "$name" $dst lid)"
expect_eq "GET $src -> $dst result" "$(json_field "$get" result)" ok

# Bounds: 38 records against --max-records 30 are read whole and refused; against 10 the 2,488-byte
# answer is over the receive bound (56 + 10 x 112 bytes) and only its first MAD is kept. Either way
# the table fails at once with the reason, nothing is resent.
for bound in 30 10; do
  rc=0
  on_node "$name" $src "$PROBE" --table --json --max-records $bound >"$out/bound$bound" || rc=$?
  expect_eq "--max-records $bound exit" "$rc" 1
done
python3 - "$out/bound30" "$out/bound10" <<'PY'
import json, sys
read_whole, cut = (json.loads(open(f).read().splitlines()[-1])["table"] for f in sys.argv[1:])
assert read_whole["reason"] == "SA table: 38 records, more than the maximum of 30", read_whole
assert read_whole["stats"]["oversized_mads"] == 0, read_whole
assert cut["reason"] == "SA table: the answer of 2488 bytes is longer than the 1176 bytes that 10 records may take", cut
assert cut["stats"]["oversized_mads"] == 1, cut
for t in (read_whole, cut):
    assert t["result"] == "invalid" and t["stats"]["mad_retries"] == 0, t
print("over the bound: refused with the reason, no resend")
PY
pass "GetTable answers are bounded by --max-records"

# umad2sim carries no RMPP: the table is refused before any GetTable is sent, GETs work.
old=$name
name=$(lab_name fgt-sim)
IBAT_LAB_KERNEL=umad2sim lab_up "$name" --topology "$TOPO/small-2sw4hca.net" >/dev/null
node=$("$LAB" hosts --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["node"])')
peer=$("$LAB" hosts --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[1]["gid"])')
expect_exit 1 "--table under umad2sim" -- on_node "$name" "$node" "$PROBE" --table --json
expect_contains "--table under umad2sim says why" "$LAST_ERR" \
  "GetTables off until the next SM: the MAD layer has no RMPP (umad2sim): a GetTable answer would arrive cut"
get=$(on_node "$name" "$node" "$PROBE" --dgid "$peer" --json) || fail "GET under umad2sim failed: $get"
expect_eq "GET under umad2sim" "$(json_field "$get" result)" ok
expect_eq "no GetTable under umad2sim" "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["stats"]["sa_gettables_sent"])' "$get")" 0
