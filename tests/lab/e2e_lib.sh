# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Shared helpers for tests/lab/e2e_*.sh (ctest e2e.*): ibatd on lab nodes (ibatd_lib.sh, folder
# $E2E_DIR), the ibat CLI against it, saquery for reference answers. Source it after lab_lib.sh.
# umad2sim is preloaded into a sanitized ibatd: skip ASan's link-order check.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}
# write_config: no [policy] defaults; quick polls, snapshot only at shutdown
DAEMON_KIND=e2e CONFIG_POLICY_DEFAULTS=() CONFIG_TABLES='[fabric]
poll_interval_ms = 500
[snapshot]
interval_s = 0'
source "$LAB_TEST_DIR/ibatd_lib.sh"
E2E_DIR=$DAEMON_DIR

# hosts_json NAME: `ibat-lab hosts --json`, cached in $E2E_DIR/hosts-NAME.json; prints the file
hosts_file() {
  local f=$E2E_DIR/hosts-$1.json
  [[ -s $f ]] || "$LAB" hosts --name "$1" --json >"$f"
  echo "$f"
}
# host NAME NODE FIELD: gid, lid or guid of NODE
host() {
  python3 -c 'import json,sys; print(next(h[sys.argv[3]] for h in json.load(open(sys.argv[1])) if h["node"] == sys.argv[2]))' \
    "$(hosts_file "$1")" "$2" "$3"
}

# saquery_path NAME NODE SGID DGID [SAQUERY ARGS]: saquery's PathRecord as JSON with the CLI's
# units (dlid, slid, sl, mtu in bytes, rate in Gb/s, pkt_life); ARGS e.g. --service_id 0x1060cbc
saquery_path() {
  "$LAB" run --name "$1" --node "$2" -- saquery -p --sgid-to-dgid "$3-$4" "${@:5}" 2>/dev/null | python3 -c '
import json, re, sys
MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112,
        14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}
f = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", sys.stdin.read(), re.M))
print(json.dumps({"dlid": int(f["dlid"]), "slid": int(f["slid"]), "sl": int(f["sl"], 16),
                  "mtu": MTU[int(f["mtu"], 16) & 0x3F], "rate": RATE[int(f["rate"], 16) & 0x3F],
                  "pkt_life": int(f["pkt_life"], 16) & 0x3F}))'
}

# jq_py JSON EXPR: evaluates a Python expression over `j` (the parsed JSON) and prints it
jq_py() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
