#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.twin_hotplug: a CA removed and added while a process runs under the umad twin, through its
# control FIFO (IBAT_TWIN_CONTROL), as the kernel shows a driver unload or hot-plug. In one process
# on host g0001 of rails-4x2 (python3 driving libibumad): "remove mlx5_1" wakes a reader blocked in
# umad_recv with EIO, the CA leaves umad_get_cas_names and sysfs, opens of umad1/issm1 fail ENXIO,
# the dead file reads and writes EIO and registers no agent (EPIPE), and every uevent socket (one
# opened before the twin's start, one after) gets the kernel's remove uevents; mlx5_0 answers
# SMPs throughout. "add mlx5_1": the add uevents, a new file answers SMPs, the dead one stays dead.
# Repeats, unknown commands and CAs change nothing and are still answered in <path>.done. Then
# umad's own tools: a process that finds "remove mlx5_1" waiting in the FIFO at its start never
# sees mlx5_1 (ibstat -l, ibstat mlx5_1), and sminfo -C mlx5_0 still reaches the SM.
source "$(dirname "$0")/lab_lib.sh"
rails=$(lab_name hotplug)
tmp=$(mktemp -d); on_exit 'rm -rf "$tmp"'
export IBAT_LAB_KERNEL=twin
lab_up "$rails" --topology "$TOPO/rails-4x2.net" >/dev/null

cat >"$tmp/harness.py" <<'EOF'
import ctypes, errno, fcntl, os, socket, stat, struct, sys, threading, time

control = os.environ["IBAT_TWIN_CONTROL"]
umad = ctypes.CDLL("libibumad.so.3", use_errno=True)
REGISTER_AGENT = 0xC01C1B01  # IB_USER_MAD_REGISTER_AGENT (struct ib_user_mad_reg_req: 28 bytes)

def fail(what):
    print(f"FAIL: {what}", file=sys.stderr)
    sys.exit(1)

def check(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, expected {want!r}")
    print(f"ok: {what} = {want!r}")

def command(line):
    """Writes one control line and waits until <path>.done answers it."""
    done = control + ".done"
    seen = lambda: open(done).read().splitlines().count(line) if os.path.exists(done) else 0
    before = seen()
    with open(control, "w") as fifo:
        fifo.write(line + "\n")
    deadline = time.monotonic() + 10
    while seen() == before:
        if time.monotonic() > deadline:
            fail(f"'{line}' not answered in {done} within 10 s")
        time.sleep(0.02)

def uevent_socket():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)  # NETLINK_KOBJECT_UEVENT
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((0, 1))
    return s

def uevents(s, count):
    """The next `count` uevents as (ACTION@DEVPATH, {KEY: VALUE}); then none may follow."""
    out = []
    s.settimeout(5)
    for _ in range(count):
        fields = s.recv(8192).split(b"\0")
        out.append((fields[0].decode(), dict(f.decode().split("=", 1) for f in fields[1:] if f)))
    s.settimeout(0.3)
    try:
        extra = s.recv(8192)
        fail(f"an uevent too many: {extra!r}")
    except socket.timeout:
        pass
    return out

def cas():
    names = (ctypes.c_char * 20 * 32)()
    n = umad.umad_get_cas_names(names, 32)
    return [names[i].value.decode() for i in range(n)]

def open_port(ca):
    fd = umad.umad_open_port(ca.encode(), 0)
    if fd < 0:
        fail(f"umad_open_port({ca}): {fd}")
    agent = umad.umad_register(fd, 0x81, 1, 0, None)  # directed-route SMPs
    if agent < 0:
        fail(f"umad_register on {ca}: {agent}")
    return fd, agent

def nodedesc(fd, agent):
    """NodeDescription of the CA itself: a directed-route SMP of no hop, answered by ibsim."""
    hdr = struct.pack("<5I", 0, 0, 0, 0, 0) + struct.pack(">IIH", 0, 0, 0xFFFF) + bytes(6 + 16 + 4 + 2 + 6)
    mad = bytearray(256)
    mad[0:4] = bytes([1, 0x81, 1, 0x01])                   # SubnGet
    mad[8:16] = struct.pack(">Q", 0x4242)                  # TID
    mad[16:18] = struct.pack(">H", 0x0010)                 # NodeDescription
    mad[32:36] = struct.pack(">HH", 0xFFFF, 0xFFFF)        # DrSLID, DrDLID
    buf = ctypes.create_string_buffer(hdr + bytes(mad))
    rc = umad.umad_send(fd, agent, buf, 256, 2000, 0)
    if rc != 0:
        fail(f"umad_send of the SMP: {rc}")
    length = ctypes.c_int(256)
    rc = umad.umad_recv(fd, buf, ctypes.byref(length), 5000)
    if rc != agent:
        fail(f"umad_recv of the SMP's answer: {rc}")
    return buf.raw[64 + 64:64 + 128].split(b"\0")[0].decode()

def errno_of(call):
    try:
        call()
    except OSError as e:
        return errno.errorcode[e.errno]
    return "no error"

early = uevent_socket()  # before the twin starts: it starts at the first IB path below
check("CAs at the start", cas(), ["mlx5_0", "mlx5_1"])
check("the twin made the control FIFO", stat.S_ISFIFO(os.stat(control).st_mode), True)
late = uevent_socket()
fd0, agent0 = open_port("mlx5_0")
fd1, agent1 = open_port("mlx5_1")
check("SMP on mlx5_1", nodedesc(fd1, agent1), "g0001 mlx5_1")
lid = open("/sys/class/infiniband/mlx5_1/ports/1/lid").read()

blocked = {}
def reader():
    buf = ctypes.create_string_buffer(64 + 256)
    length = ctypes.c_int(256)
    blocked["rc"] = umad.umad_recv(fd1, buf, ctypes.byref(length), -1)
thread = threading.Thread(target=reader, daemon=True)
thread.start()

command("remove mlx5_1")
thread.join(5)
check("umad_recv blocked on mlx5_1 wakes up", blocked.get("rc"), -errno.EIO)
check("CAs after remove", cas(), ["mlx5_0"])
check("infiniband_mad after remove", sorted(os.listdir("/sys/class/infiniband_mad")), ["abi_version", "issm0", "umad0"])
check("open of umad1", errno_of(lambda: os.open("/dev/infiniband/umad1", os.O_RDWR)), "ENXIO")
check("open of issm1", errno_of(lambda: os.open("/dev/infiniband/issm1", os.O_RDWR)), "ENXIO")
check("read of the dead file", errno_of(lambda: os.read(fd1, 320)), "EIO")
check("umad_send on the dead file", umad.umad_send(fd1, agent1, ctypes.create_string_buffer(320), 256, 0, 0), -errno.EIO)
check("agent registration on the dead file",
      errno_of(lambda: fcntl.ioctl(fd1, REGISTER_AGENT, bytearray(28))), "EPIPE")
for name, s in (("early", early), ("late", late)):
    got = uevents(s, 3)
    check(f"remove uevents on the {name} socket", [h for h, _ in got], [
        "remove@/devices/virtual/infiniband_mad/issm1",
        "remove@/devices/virtual/infiniband_mad/umad1",
        "remove@/devices/virtual/infiniband/mlx5_1"])
    umad1 = got[1][1]
    check(f"umad1's remove uevent ({name})",
          {k: umad1[k] for k in ("ACTION", "DEVPATH", "SUBSYSTEM", "DEVNAME")},
          {"ACTION": "remove", "DEVPATH": "/devices/virtual/infiniband_mad/umad1",
           "SUBSYSTEM": "infiniband_mad", "DEVNAME": "infiniband/umad1"})
check("SMP on mlx5_0 with mlx5_1 gone", nodedesc(fd0, agent0), "g0001 mlx5_0")

command("remove mlx5_1")
uevents(late, 0)
print("ok: removing it again changes nothing")
early.close()
command("add mlx5_1")
check("add uevents", [h for h, _ in uevents(late, 3)], [
    "add@/devices/virtual/infiniband_mad/umad1",
    "add@/devices/virtual/infiniband_mad/issm1",
    "add@/devices/virtual/infiniband/mlx5_1"])
check("CAs after add", cas(), ["mlx5_0", "mlx5_1"])
check("mlx5_1's LID after add", open("/sys/class/infiniband/mlx5_1/ports/1/lid").read(), lid)
fd2, agent2 = open_port("mlx5_1")
check("SMP on a new file of mlx5_1", nodedesc(fd2, agent2), "g0001 mlx5_1")
check("the dead file stays dead", errno_of(lambda: os.read(fd1, 320)), "EIO")
command("add mlx5_1")
command("unplug mlx5_1")
command("remove mlx5_9")
uevents(late, 0)
print("ok: adding it again, an unknown command and an unknown CA change nothing")
for fd in (fd0, fd1, fd2):
    umad.umad_close_port(fd)
EOF

IBAT_TWIN_CONTROL=$tmp/control "$LAB" run --name "$rails" --host g0001 -- python3 "$tmp/harness.py" \
  2>"$tmp/harness.err" || { cat "$tmp/harness.err" >&2; fail "the hot-plug harness failed"; }
expect_contains "an unknown command on stderr" "$(cat "$tmp/harness.err")" \
  "'unplug mlx5_1': unknown command 'unplug' (use: add <ca>, remove <ca>, lose-rmpp-segment <ca> <n>); ignored"
expect_contains "an unknown CA on stderr" "$(cat "$tmp/harness.err")" "no CA named mlx5_9 in this process"
[[ ! -e $tmp/control ]] || fail "the FIFO the twin made outlived its process"
pass "the FIFO the twin made is gone with its process"

# --- umad's own tools, in processes that find "remove mlx5_1" waiting in the FIFO at their start
mkfifo "$tmp/tools"
exec 3<>"$tmp/tools"  # holds the FIFO open, so a line written now waits for the next twin
tool() { IBAT_TWIN_CONTROL=$tmp/tools "$LAB" run --name "$rails" --host g0001 -- "$@"; }
echo "remove mlx5_1" >&3
expect_eq "ibstat -l with mlx5_1 removed at the start" "$(tool ibstat -l 2>/dev/null | tr '\n' ' ')" "mlx5_0 "
expect_eq "the line answered" "$(cat "$tmp/tools.done")" "remove mlx5_1"
echo "remove mlx5_1" >&3
rc=0; out=$(tool ibstat mlx5_1 2>&1) || rc=$?
[[ $rc -ne 0 ]] || fail "ibstat mlx5_1 of a removed CA succeeded: $out"
pass "ibstat mlx5_1 of a removed CA fails (exit $rc)"
echo "remove mlx5_1" >&3
expect_contains "sminfo -C mlx5_0 beside the removed CA" "$(tool sminfo -C mlx5_0 2>/dev/null)" "SMINFO_MASTER"
exec 3>&-
[[ -p $tmp/tools ]] || fail "a FIFO the test made was removed by the twin"
expect_eq "ibstat -l with nothing waiting" "$(tool ibstat -l 2>/dev/null | tr '\n' ' ')" "mlx5_0 mlx5_1 "
