#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""Writes ipoib-arp-sll.pcap: what `tcpdump -i ib0 -w FILE` records on an IPoIB interface.

libpcap captures IPoIB as Linux cooked frames (LINKTYPE_LINUX_SLL = 113, little-endian, microsecond
timestamps). The 16-byte cooked header carries ARPHRD_INFINIBAND (32) and an address length of 20,
of which only the first 8 bytes fit its address field. The capture holds, in order:
  1 ARP request  10.1.0.1 -> who-has 10.1.0.2  (broadcast, outgoing)
  2 ARP reply    10.1.0.2 is-at <hw of node 2>
  3 IPv4 ICMP echo request 10.1.0.1 -> 10.1.0.2 (not ARP: skipped by the scan)
  4 gratuitous ARP request from 10.1.0.3 (sender == target IP)
  5 ARP reply    10.1.0.4 is-at <hw of node 4>, padded to 64 bytes by the link
Validate with: tshark -r ipoib-arp-sll.pcap -T fields -e frame.number -e arp.opcode -e arp.src.proto_ipv4
"""
import struct
import sys

PREFIX = bytes.fromhex("fe80000000000000")


def hw(qpn, guid):
    return bytes([0x80]) + qpn.to_bytes(3, "big") + PREFIX + guid.to_bytes(8, "big")


NODE = {n: hw(0x48 + n, 0x0002C90300A1B200 + n) for n in range(1, 5)}


def ip(last):
    return bytes([10, 1, 0, last])


def arp(op, sender_hw, sender_ip, target_hw, target_ip):
    return struct.pack(">HHBBH", 32, 0x0800, 20, 4, op) + sender_hw + sender_ip + target_hw + target_ip


def sll(pkttype, addr, protocol, payload):
    return struct.pack(">HHH", pkttype, 32, 20) + addr[:8] + struct.pack(">H", protocol) + payload


def icmp_echo(src, dst):
    icmp = struct.pack(">BBHHH", 8, 0, 0, 0x1234, 1) + bytes(range(16))
    total = 20 + len(icmp)
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0x4242, 0x4000, 64, 1, 0, src, dst)
    return hdr + icmp


OUTGOING, BROADCAST, HOST = 4, 1, 0
frames = [
    sll(OUTGOING, NODE[1], 0x0806, arp(1, NODE[1], ip(1), bytes(20), ip(2))),
    sll(HOST, NODE[2], 0x0806, arp(2, NODE[2], ip(2), NODE[1], ip(1))),
    sll(OUTGOING, NODE[1], 0x0800, icmp_echo(ip(1), ip(2))),
    sll(BROADCAST, NODE[3], 0x0806, arp(1, NODE[3], ip(3), bytes(20), ip(3))),
    sll(HOST, NODE[4], 0x0806, arp(2, NODE[4], ip(4), NODE[1], ip(1)) + bytes(8)),
]

out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 113)
t0 = 1_700_000_000
for i, frame in enumerate(frames):
    out += struct.pack("<IIII", t0 + i, 200_000 * i, len(frame), len(frame)) + frame
with open(sys.argv[1] if len(sys.argv) > 1 else "ipoib-arp-sll.pcap", "wb") as f:
    f.write(out)
