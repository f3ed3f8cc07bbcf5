#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# faults.hotplug: one ibatd on a 2-HCA host of rails-4x2 (g0001: mlx5_0, mlx5_1) under load from
# mlx5_0 while mlx5_1 is removed and added back three times (a driver reload, as the umad twin
# shows it: sysfs entries gone, umad files dead, the kernel's uevents). mlx5_0's load: every
# request answered exactly once, no DLID 0, no failure; after the last add mlx5_1 serves every
# destination of its rail again with 0 failures; the daemon's RSS stays flat (a dropped port's
# Resolver, fabric and I/O thread are freed) and it stops cleanly with no sanitizer report.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/faults_lib.sh"
name=$(lab_name fhp)
lab_up "$name" --topology "$TOPO/rails-4x2.net" >/dev/null
write_config "$FAULTS_DIR/A.toml" "retry_count = 12"
control=$FAULTS_DIR/hotplug.fifo
export IBAT_TWIN_CONTROL=$control
start_ibatd "$name" host:g0001 A
unset IBAT_TWIN_CONTROL  # the daemon's alone

"$LAB" hosts --name "$name" --json >"$FAULTS_DIR/hosts.json"
# from-<ca>: from that CA of g0001 to every HCA of its rail on the other hosts
python3 - "$FAULTS_DIR/hosts.json" "$FAULTS_DIR" <<'PY'
import json, sys
hosts = json.load(open(sys.argv[1]))
for ca in ("mlx5_0", "mlx5_1"):
    src = next(h for h in hosts if h.get("host") == "g0001" and h.get("ca") == ca)
    with open(f"{sys.argv[2]}/from-{ca}", "w") as out:
        for h in hosts:
            if h.get("host") not in (None, "g0001") and h.get("ca") == ca:
                print(h["gid"], f"from={src['gid']}", file=out)
PY
[[ $(wc -l <"$FAULTS_DIR/from-mlx5_0") -ge 3 ]] || fail "too few destinations: $(cat "$FAULTS_DIR/from-mlx5_0")"

both="mlx5_0:1=active mlx5_1:1=active"
wait_ports A "$both"
for ca in mlx5_0 mlx5_1; do
  load_run "$FAULTS_DIR/warm-$ca.json" "warm-up: every destination of $ca once" --socket "$(sock A)" \
    --dgids "$FAULTS_DIR/from-$ca" --count "$(wc -l <"$FAULTS_DIR/from-$ca")" --depth 16 --expect-exists --timeout-ms 15000
done
load_run "$FAULTS_DIR/steady.json" "2 s of steady load from mlx5_0" --socket "$(sock A)" \
  --dgids "$FAULTS_DIR/from-mlx5_0" --connections 2 --depth 8 --duration 2 --rate 1000 --expect-exists
RSS_A=$(rss_kb A)

out=$FAULTS_DIR/load.json
load_start "$out" --socket "$(sock A)" --dgids "$FAULTS_DIR/from-mlx5_0" --connections 4 --depth 8 --rate 1500 \
  --uncached-share 0.05 --timeout-ms 15000 --expect-exists --duration 600
for round in 1 2 3; do
  twin_control "$control" "remove mlx5_1"
  wait_ports A "mlx5_0:1=active"
  twin_control "$control" "add mlx5_1"
  wait_ports A "$both"
done
pass "mlx5_1 removed and added back three times under load from mlx5_0"
sleep 1  # load after the last add
kill -INT "$LOAD_PID"
load_wait "$out" "load from mlx5_0 through three removals and additions of mlx5_1"
load_run "$FAULTS_DIR/after.json" "mlx5_1 after the last add: every destination of its rail" --socket "$(sock A)" \
  --dgids "$FAULTS_DIR/from-mlx5_1" --count "$(wc -l <"$FAULTS_DIR/from-mlx5_1")" --depth 16 --expect-exists \
  --uncached-share 1 --timeout-ms 15000
report "a CA removed and added back three times under load from the other CA" "$out"
expect_rss_stable A "$RSS_A"
stop_ibatd_cleanly A
