#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.host_cas: under the umad twin (IBAT_LAB_KERNEL=twin), `run`/`env` --host attach a process
# to every HCA of a host and --also NAME:NODE adds a CA of another fabric: the environment they
# give (IBAT_TWIN_CAS in file order, @sockname only for the other fabric, IBAT_TWIN_SYSFS_DIR,
# IBAT_TWIN_EVENTS_DIR,
# SIM_HOST, the twin as LD_PRELOAD), and their refusals: more than 9 CAs on one simulator, two
# CAs of one name, --also on an unknown fabric or node or without NAME:, and --also on a
# libumad2sim fabric.
#
# IBAT_LAB_TWIN points at Debian's libumad2sim.so, which stands in for the twin here: it ignores
# IBAT_TWIN_* and attaches to SIM_HOST, the first CA. So this checks ibat-lab's side of the
# contract with the twin (lab/umad-twin/) whether or not the twin builds.
source "$(dirname "$0")/lab_lib.sh"
compute=$(lab_name cas-c)
storage=$(lab_name cas-s)
single=$(lab_name cas-u)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
root=${IBAT_LAB_DIR:-/tmp/ibat-lab}
standin=${IBAT_LAB_UMAD2SIM:-$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -n1)}
[[ -f $standin ]] || fail "no libumad2sim.so to stand in for the twin (package libumad2sim0)"

# storage: one switch and ten HCAs of host g0002, CA names mlx5_4..mlx5_13
{
  printf 'Switch\t12 "st-sw"\n'
  for k in {0..9}; do printf '[%d]\t"g0002-st%d"[1]\n' $((k + 1)) "$k"; done
  echo
  for k in {0..9}; do printf 'Hca\t1 "g0002-st%d" # "g0002 mlx5_%d"\n[1]\t"st-sw"[%d]\n\n' "$k" $((k + 4)) $((k + 1)); done
} >"$tmp/storage.net"

IBAT_LAB_KERNEL=twin IBAT_LAB_TWIN=$standin lab_up "$compute" --topology "$TOPO/rails-4x2.net" >/dev/null
IBAT_LAB_KERNEL=twin IBAT_LAB_TWIN=$standin lab_up "$storage" --topology "$tmp/storage.net" >/dev/null
IBAT_LAB_KERNEL=umad2sim lab_up "$single" --topology "$TOPO/small-2sw4hca.net" >/dev/null
expect_eq "kernel and preload in status" \
  "$("$LAB" status --name "$compute" --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["kernel"], s["preload"])')" \
  "twin $standin"

want="export IBSIM_SOCKNAME=ibat-lab-$compute
export SIM_HOST=g0002-mlx5_0
export LD_PRELOAD=$standin
export IBAT_TWIN_CAS=mlx5_0=g0002-mlx5_0,mlx5_1=g0002-mlx5_1
export IBAT_TWIN_SYSFS_DIR=$root/$compute
export IBAT_TWIN_EVENTS_DIR=$root/port-events"
expect_eq "env --host g0002" "$("$LAB" env --name "$compute" --host g0002)" "$want"
expect_eq "env --node g0003-mlx5_1" \
  "$("$LAB" env --name "$compute" --node g0003-mlx5_1 | grep IBAT_TWIN_CAS)" "export IBAT_TWIN_CAS=mlx5_1=g0003-mlx5_1"
expect_eq "env --node of a switch (as OpenSM runs)" \
  "$("$LAB" env --name "$storage" --node st-sw | grep IBAT_TWIN_CAS)" "export IBAT_TWIN_CAS=ibsim0=st-sw"
expect_eq "env --host g0002 --also storage" \
  "$("$LAB" env --name "$compute" --host g0002 --also "$storage:g0002-st0" --also "$storage:g0002-st3" | grep IBAT_TWIN_CAS)" \
  "export IBAT_TWIN_CAS=mlx5_0=g0002-mlx5_0,mlx5_1=g0002-mlx5_1,mlx5_4=g0002-st0@ibat-lab-$storage,mlx5_7=g0002-st3@ibat-lab-$storage"
expect_eq "a description of one word: host = node id, CA ibsim0" \
  "$(host_field "$single" Hca3 host) $(host_field "$single" Hca3 ca)" "Hca3 ibsim0"
expect_eq "--host of a one-HCA host under libumad2sim" \
  "$("$LAB" env --name "$single" --host Hca3 | grep SIM_HOST)" "export SIM_HOST=Hca3"

out=$(SIM_SET_ISSM=1 IBAT_TWIN_CAS=stale IBAT_TWIN_SYSFS_DIR=stale IBAT_TWIN_EVENTS_DIR=stale LD_PRELOAD=libmine.so \
  "$LAB" run --name "$compute" --host g0001 -- sh -c 'echo "$IBAT_TWIN_CAS|$IBAT_TWIN_SYSFS_DIR|$IBAT_TWIN_EVENTS_DIR|$LD_PRELOAD|${SIM_SET_ISSM-unset}"' 2>/dev/null)
expect_eq "run --host: the process's environment" "$out" \
  "mlx5_0=g0001-mlx5_0,mlx5_1=g0001-mlx5_1|$root/$compute|$root/port-events|libmine.so:$standin|unset"
expect_eq "run --host g0001 reaches the SM (through the stand-in, on mlx5_0)" \
  "$("$LAB" run --name "$compute" --host g0001 -- sminfo 2>/dev/null | awk '{print $NF}')" SMINFO_MASTER

expect_exit 2 "ten CAs of one simulator" -- "$LAB" env --name "$storage" --host g0002
expect_contains "client limit message" "$LAST_ERR" "host g0002 asks for 10 CAs on the simulator ibat-lab-$storage"
expect_contains "client limit reason" "$LAST_ERR" "ibsim serves at most 10 clients (IBSIM_MAX_CLIENTS)"
expect_contains "client limit advice" "$LAST_ERR" "at most 9 CAs of one fabric"
nine=(); for k in {1..8}; do nine+=(--also "$storage:g0002-st$k"); done
expect_exit 0 "nine CAs of one simulator" -- "$LAB" env --name "$storage" --node g0002-st0 "${nine[@]}"
expect_exit 2 "two CAs named mlx5_0" -- "$LAB" env --name "$compute" --host g0002 --also "$compute:g0000-mlx5_0"
expect_contains "duplicate CA message" "$LAST_ERR" "two CAs of the process would be named mlx5_0 (g0002-mlx5_0 of fabric $compute, g0000-mlx5_0 of fabric $compute)"
expect_exit 3 "--also on an unknown fabric" -- "$LAB" run --name "$compute" --host g0002 --also "nosuch-$$:x" -- true
expect_contains "unknown fabric message" "$LAST_ERR" "no fabric named 'nosuch-$$' is up"
expect_exit 5 "--also on an unknown node" -- "$LAB" run --name "$compute" --host g0002 --also "$storage:g0002-mlx5_0" -- true
expect_contains "unknown node message" "$LAST_ERR" "unknown node 'g0002-mlx5_0' in fabric '$storage'"
expect_exit 2 "--also without NAME:" -- "$LAB" env --name "$compute" --host g0002 --also g0002-st0
expect_contains "--also syntax message" "$LAST_ERR" "use --also NAME:NODE"
expect_exit 2 "--also on a libumad2sim fabric" -- "$LAB" env --name "$single" --node Hca1 --also "$storage:g0002-st0"
expect_contains "one-CA message" "$LAST_ERR" "asks for 2 CAs (Hca1, g0002-st0)"
