#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.twin: how ibat-lab gets the umad twin library (`ibat-lab twin`, also what `up` preloads
# under IBAT_LAB_KERNEL=twin): built from <script dir>/umad-twin/*.cpp into
# $IBAT_LAB_DIR/.twin/<hash16>/libibat_umad_twin.so, once per content of the sources and
# headers (also when several ibat-labs ask at once), a compiler error shown (exit 1), no sources
# or a missing IBAT_LAB_TWIN an error (exit 1), IBAT_LAB_TWIN used as is, a bad IBAT_LAB_KERNEL
# a usage error; and `sm start`'s stale-client reaping reads a twin client id (pid + k * 2^22)
# as its pid.
#
# It runs a copy of ibat-lab next to a stand-in umad-twin/ of two tiny files, with its own
# IBAT_LAB_DIR, so neither the real twin sources nor other tests' builds are involved.
source "$(dirname "$0")/lab_lib.sh"
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
export IBAT_LAB_DIR=$tmp/root
unset IBAT_LAB_TWIN
mkdir -p "$tmp/lab/umad-twin" "$tmp/bare"
cp "$LAB" "$tmp/lab/ibat-lab"
cp "$LAB" "$tmp/bare/ibat-lab"
twin=$tmp/lab/ibat-lab
src=$tmp/lab/umad-twin
printf '#include "probe.h"\nextern "C" int ibat_twin_probe() { return PROBE_VALUE; }\n' >"$src/probe.cpp"
printf '#define PROBE_VALUE 42\n' >"$src/probe.h"
probe() { python3 -c 'import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).ibat_twin_probe())' "$1"; }

expect_exit 1 "no twin sources" -- "$tmp/bare/ibat-lab" twin
expect_contains "no sources message" "$LAST_ERR" "no umad twin sources ($tmp/bare/umad-twin/*.cpp)"
expect_contains "no sources advice" "$LAST_ERR" "set IBAT_LAB_KERNEL=umad2sim"

first=$("$twin" twin 2>"$tmp/err1")
[[ $first =~ ^$IBAT_LAB_DIR/\.twin/[0-9a-f]{16}/libibat_umad_twin\.so$ ]] || fail "library path $first"
pass "library at \$IBAT_LAB_DIR/.twin/<hash16>/libibat_umad_twin.so"
expect_contains "first call compiles" "$(cat "$tmp/err1")" "compiling the umad twin (1 files in $src)"
expect_eq "the built library's code" "$(probe "$first")" 42
second=$("$twin" twin 2>"$tmp/err2")
expect_eq "second call: same library" "$second" "$first"
[[ ! -s $tmp/err2 ]] || fail "second call compiled again: $(cat "$tmp/err2")"
pass "second call does not compile"

printf '#define PROBE_VALUE 43\n' >"$src/probe.h"
third=$("$twin" twin 2>/dev/null)
[[ $third != "$first" ]] || fail "a changed header kept the library $first"
expect_eq "a changed header gives a new library" "$(probe "$third")" 43

printf '#define PROBE_VALUE 44\n' >"$src/probe.h"
for i in 1 2 3; do "$twin" twin >"$tmp/par$i.out" 2>"$tmp/par$i.err" & done
wait
expect_eq "three at once: one library" "$(sort -u "$tmp"/par?.out | wc -l)" 1
expect_eq "three at once: one compile" "$(cat "$tmp"/par?.err | grep -c 'compiling the umad twin')" 1
expect_eq "three at once: its code" "$(probe "$(cat "$tmp/par1.out")")" 44
leftover=$(find "$IBAT_LAB_DIR/.twin" -name '*.tmp-*')
[[ -z $leftover ]] || fail "temporary files left: $leftover"
pass "no temporary files left"

printf 'extern "C" int ibat_twin_probe() { return oops; }\n' >"$src/probe.cpp"
expect_exit 1 "a compile error" -- "$twin" twin
expect_contains "compile error message" "$LAST_ERR" "compiling the umad twin failed (g++ exit 1)"
expect_contains "compiler output shown" "$LAST_ERR" "probe.cpp:1:"
expect_contains "compiler error shown" "$LAST_ERR" "oops"
[[ -z $(find "$IBAT_LAB_DIR/.twin" -name '*.tmp-*') ]] || fail "a failed compile left its output"
pass "a failed compile leaves no file"

cp "$first" "$tmp/given.so"
expect_eq "IBAT_LAB_TWIN is used as is" "$(IBAT_LAB_TWIN=$tmp/given.so "$twin" twin)" "$tmp/given.so"
expect_exit 1 "IBAT_LAB_TWIN missing" -- env IBAT_LAB_TWIN="$tmp/none.so" "$twin" twin
expect_contains "IBAT_LAB_TWIN message" "$LAST_ERR" "IBAT_LAB_TWIN=$tmp/none.so does not exist"
expect_exit 2 "a bad IBAT_LAB_KERNEL" -- env IBAT_LAB_KERNEL=kernel "$twin" up --name "t-twin-$$" --topology "$TOPO/small-2sw4hca.net"
expect_contains "IBAT_LAB_KERNEL message" "$LAST_ERR" "IBAT_LAB_KERNEL=kernel: use one of twin, umad2sim"

# reap_stale_clients: console `Attached` lists twin clients as pid + k * 4194304
python3 - "$LAB" <<'EOF'
import importlib.machinery, importlib.util, os, subprocess, sys
loader = importlib.machinery.SourceFileLoader("ibat_lab", sys.argv[1])
spec = importlib.util.spec_from_loader("ibat_lab", loader)
lab = importlib.util.module_from_spec(spec)
loader.exec_module(lab)
dead = subprocess.Popen(["true"]); dead.wait()
alive, stride = os.getpid(), lab.TWIN_CLIENT_STRIDE
assert stride == 4194304
listing = "".join(f'Client {n}: pid {pid} connected at "x" port 0x1, lid 0x1, qp 0 InfiniBand\n'
                  for n, pid in enumerate([alive, alive + stride, dead.pid + stride,
                                           alive + 2 * stride, dead.pid, dead.pid + 3 * stride]))
sent = []
fab = lab.Fabric.__new__(lab.Fabric)
fab.console = lambda command, reply_timeout=5.0: (sent.append(command), listing)[1] \
    if command == "Attached" else sent.append(command)
assert fab.reap_stale_clients() == [2, 4, 5], sent
assert sent == ["Attached", "X 2", "X 4", "X 5"], sent
EOF
pass "stale twin clients: the ids of a dead pid freed, those of a live one kept"
