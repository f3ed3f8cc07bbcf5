// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// IPoIB ARP codec (see arp.h).
#include "ipoib/arp.h"

#include <algorithm>
#include <string>

#include "wire/byte_order.h"

namespace ibat::ipoib {
namespace {

core::HwAddr load_hw(std::span<const std::uint8_t> b, std::size_t at) {
  core::HwAddr hw;
  for (std::size_t i = 0; i < hw.raw.size(); ++i) hw.raw[i] = b[at + i];
  return hw;
}

core::IpAddr load_ipv4(std::span<const std::uint8_t> b, std::size_t at) {
  return core::IpAddr::from_v4(wire::get32(b, at));
}

DecodeError error(const std::string& what) { return DecodeError{"ARP: " + what}; }

}  // namespace

std::variant<ArpPacket, DecodeError> decode_arp(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 8)
    return error("truncated header: " + std::to_string(bytes.size()) + " of 8 bytes");
  const std::uint16_t htype = wire::get16(bytes, 0);
  const std::uint16_t ptype = wire::get16(bytes, 2);
  const std::uint8_t hlen = bytes[4];
  const std::uint8_t plen = bytes[5];
  const std::uint16_t op = wire::get16(bytes, 6);
  if (htype != kArpHardwareInfiniband)
    return error("hardware type " + std::to_string(htype) + " at offset 0 is not InfiniBand (32)");
  if (ptype != kEtherTypeIpv4)
    return error("protocol type " + std::to_string(ptype) + " at offset 2 is not IPv4 (0x0800)");
  if (hlen != kIpoibHwAddrLen)
    return error("hardware address length " + std::to_string(hlen) + " at offset 4 is not 20");
  if (plen != kIpv4AddrLen)
    return error("protocol address length " + std::to_string(plen) + " at offset 5 is not 4");
  if (op != static_cast<std::uint16_t>(ArpOp::request) && op != static_cast<std::uint16_t>(ArpOp::reply))
    return error("operation " + std::to_string(op) + " at offset 6 is neither request (1) nor reply (2)");
  if (bytes.size() < kIpoibArpSize)
    return error("truncated addresses: " + std::to_string(bytes.size()) + " of " +
                 std::to_string(kIpoibArpSize) + " bytes");
  ArpPacket p;
  p.op = static_cast<ArpOp>(op);
  p.sender_hw = load_hw(bytes, 8);
  p.sender_ip = load_ipv4(bytes, 28);
  p.target_hw = load_hw(bytes, 32);
  p.target_ip = load_ipv4(bytes, 52);
  return p;
}

std::vector<std::uint8_t> encode_arp(const ArpPacket& packet) {
  std::vector<std::uint8_t> out(kIpoibArpSize);
  wire::put16(out, 0, kArpHardwareInfiniband);
  wire::put16(out, 2, kEtherTypeIpv4);
  out[4] = kIpoibHwAddrLen;
  out[5] = kIpv4AddrLen;
  wire::put16(out, 6, static_cast<std::uint16_t>(packet.op));
  std::copy(packet.sender_hw.raw.begin(), packet.sender_hw.raw.end(), out.begin() + 8);
  std::copy(packet.sender_ip.raw.begin() + 12, packet.sender_ip.raw.end(), out.begin() + 28);
  std::copy(packet.target_hw.raw.begin(), packet.target_hw.raw.end(), out.begin() + 32);
  std::copy(packet.target_ip.raw.begin() + 12, packet.target_ip.raw.end(), out.begin() + 52);
  return out;
}

NeighbourUpdate neighbour_update(const ArpPacket& packet) {
  return NeighbourUpdate{packet.sender_ip, packet.sender_hw, packet.op == ArpOp::reply};
}

}  // namespace ibat::ipoib
