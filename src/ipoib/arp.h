// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// IPoIB ARP packets (RFC 4391 section 4 / RFC 826): hardware type 32 (InfiniBand), 20-byte hardware
// addresses (flags + QPN + GID), IPv4 protocol addresses. Decode from bytes, encode for tests and
// tools, and turn a packet into the neighbour update the neighbour table consumes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "core/types.h"
#include "ipoib/decode_error.h"

namespace ibat::ipoib {

inline constexpr std::uint16_t kArpHardwareInfiniband = 32;  // IANA ARP hardware type
inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr std::uint8_t kIpoibHwAddrLen = 20;
inline constexpr std::uint8_t kIpv4AddrLen = 4;
// 8-byte fixed header + sender (20 + 4) + target (20 + 4).
inline constexpr std::size_t kIpoibArpSize = 8 + 2 * (kIpoibHwAddrLen + kIpv4AddrLen);

enum class ArpOp : std::uint16_t { request = 1, reply = 2 };

struct ArpPacket {
  ArpOp op = ArpOp::request;
  core::HwAddr sender_hw;
  core::IpAddr sender_ip;  // always IPv4
  core::HwAddr target_hw;  // all zero in a request
  core::IpAddr target_ip;
  bool operator==(const ArpPacket&) const = default;
};

// What an ARP packet teaches about the network: the sender's IP lives at the sender's hardware
// address. is_reply tells a solicited answer from a request / gratuitous announcement.
struct NeighbourUpdate {
  core::IpAddr ip;
  core::HwAddr hw;
  bool is_reply = false;
  bool operator==(const NeighbourUpdate&) const = default;
};

// Decodes an IPoIB ARP packet. Bytes past the 56-byte packet (link padding) are ignored. Rejects a
// wrong hardware/protocol type or length, an unknown operation and a truncated packet.
std::variant<ArpPacket, DecodeError> decode_arp(std::span<const std::uint8_t> bytes);

// Encodes an ARP packet; sender_ip and target_ip must be IPv4 (their low 4 bytes are written).
std::vector<std::uint8_t> encode_arp(const ArpPacket& packet);

NeighbourUpdate neighbour_update(const ArpPacket& packet);

}  // namespace ibat::ipoib
