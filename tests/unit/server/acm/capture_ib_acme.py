#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""Golden capture of what the real ib_acme (Debian package ibacm) sends over the ACM protocol.

Runs a one-shot Unix-socket server that records each request ib_acme sends, answers it with a
response built from the acm.h layout (so ib_acme's printed output can be checked too), and writes
the request bytes (back to back) to data/<name>.req.bin, the responses to data/<name>.resp.bin and
ib_acme's stdout (socket path replaced by SOCK) to data/<name>.out.txt.

Usage: python3 capture_ib_acme.py OUTDIR   (needs /usr/bin/ib_acme; no RDMA device needed)
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading

SGID = bytes.fromhex("fe800000000000000002c90300000001")
DGID = bytes.fromhex("fe800000000000000002c90300000002")


def path_record(dlid, slid):
    """ibv_path_record, 64 bytes, network byte order (as in infiniband/sa.h)."""
    return (struct.pack(">Q", 0) + DGID + SGID + struct.pack(">HHI", dlid, slid, (0x12345 << 8) | 64)
            + bytes([7, 0x80 | 1]) + struct.pack(">HH", 0xFFFF, (0x0 << 4) | 3)
            + bytes([0x80 | 4, 0x80 | 7, 0x80 | 18, 0]) + bytes(6))


def resolve_response(req):
    # RESOLVE: header length and ep-entry flags/type in host (little-endian) order.
    tid = req[8:16]
    if req[16 + 8 + 8 + 15] == 0x99:  # a path request for DGID ...:99 gets "no data"
        return bytes([1, 0x81, 3, 0, 0, 0]) + struct.pack("<H", 16) + tid
    body = struct.pack("<IHH", 0x1 | 0x2 | 0x8 | 0x20, 0x10, 0) + path_record(7, 3)
    return bytes([1, 0x81, 0, 0, 0, 0]) + struct.pack("<H", 16 + len(body)) + tid + body


def perf_response(req):
    counters = [1, 2, 3, 4, 5, 6, 7]
    body = b"".join(struct.pack(">Q", c) for c in counters)
    return bytes([1, 0x82, 0, len(counters), 0, 0]) + struct.pack(">H", 16 + len(body)) + req[8:16] + body


def ep_response(req):
    index = req[3]
    if index != 1:
        return bytes([1, 0x83, 2, 0, 0, 0]) + struct.pack(">H", 16) + req[8:16]
    names = [b"192.168.0.1", b"node1"]
    body = (struct.pack(">Q", 0x0002C90300000001) + bytes([1, 1, 0, 0]) + struct.pack(">HH", 0xFFFF, len(names))
            + b"ibat".ljust(64, b"\0") + b"".join(n.ljust(64, b"\0") for n in names))
    return bytes([1, 0x83, 0, 0, 0, 0]) + struct.pack(">H", 16 + len(body)) + req[8:16] + body


def serve(listener, requests, responses):
    conn, _ = listener.accept()
    with conn:
        while True:
            req = conn.recv(4096)
            if not req:
                return
            requests.append(req)
            op = req[1] & 0x0F
            resp = {1: resolve_response, 2: perf_response, 3: ep_response}[op](req)
            responses.append(resp)
            conn.sendall(resp)


def capture(outdir, name, args):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "acm.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        requests, responses = [], []
        t = threading.Thread(target=serve, args=(listener, requests, responses))
        t.start()
        out = subprocess.run(["ib_acme", "-S", path] + args, capture_output=True, text=True, timeout=10)
        t.join(timeout=10)
        listener.close()
    stdout = out.stdout.replace(path, "SOCK")
    with open(os.path.join(outdir, f"{name}.req.bin"), "wb") as f:  # requests back to back
        f.write(b"".join(requests))
    with open(os.path.join(outdir, f"{name}.resp.bin"), "wb") as f:  # what ib_acme was answered
        f.write(b"".join(responses))
    with open(os.path.join(outdir, f"{name}.out.txt"), "w") as f:
        f.write(stdout)
    print(f"{name}: {len(requests)} request(s), exit {out.returncode}")


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    capture(outdir, "resolve_gid", ["-f", "g", "-s", "fe80::2:c903:0:1", "-d", "fe80::2:c903:0:2"])
    capture(outdir, "resolve_lid", ["-f", "l", "-s", "3", "-d", "7"])
    capture(outdir, "resolve_ip", ["-f", "i", "-s", "192.168.0.1", "-d", "192.168.0.2"])
    capture(outdir, "resolve_nodata", ["-f", "g", "-d", "fe80::2:c903:0:99"])
    capture(outdir, "perf_query", ["-P"])
    capture(outdir, "ep_query", ["-e", "1"])
    capture(outdir, "ep_query_all", ["-e"])


if __name__ == "__main__":
    main()
