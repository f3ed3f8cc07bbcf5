// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of LID-routed and directed-route SMPs.
#include "mad/smp.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "wire/byte_order.h"

namespace ibat::mad {
namespace {

constexpr std::size_t kInitialPathOffset = kSmpHeaderSize + kSmpDataSize;  // 128
constexpr std::size_t kReturnPathOffset = kInitialPathOffset + kSmpMaxHops;  // 192

}  // namespace

MadBuffer encode_smp(const SmpHeader& s, std::span<const std::uint8_t> data) {
  if (data.size() > kSmpDataSize) {
    throw std::length_error("SMP data of " + std::to_string(data.size()) + " bytes exceeds 64");
  }
  MadHeader h;
  h.mgmt_class = s.directed_route ? mgmt_class::kSubnDirectedRoute : mgmt_class::kSubnLidRouted;
  h.class_version = kSmpClassVersion;
  h.method = s.method;
  h.tid = s.tid;
  h.attr_id = s.attr_id;
  h.attr_mod = s.attr_mod;
  if (s.directed_route) {
    h.status = static_cast<std::uint16_t>((s.direction ? 0x8000U : 0U) | (s.status & 0x7FFFU));
    h.class_specific = static_cast<std::uint16_t>((s.hop_pointer << 8) | s.hop_count);
  } else {
    h.status = s.status;
  }
  MadBuffer mad{};
  std::span<std::uint8_t> b(mad);
  encode_mad_header(h, b.first<kMadHeaderSize>());
  wire::put64(b, 24, s.m_key);
  if (s.directed_route) {
    wire::put16(b, 32, s.dr_slid);
    wire::put16(b, 34, s.dr_dlid);
    const std::size_t used = std::min<std::size_t>(s.hop_count + 1U, kSmpMaxHops);
    std::copy_n(s.initial_path.begin(), used, mad.begin() + kInitialPathOffset);
    std::copy_n(s.return_path.begin(), used, mad.begin() + kReturnPathOffset);
  }
  std::copy(data.begin(), data.end(), mad.begin() + kSmpHeaderSize);
  return mad;
}

Result<Smp> decode_smp(std::span<const std::uint8_t> b) {
  constexpr std::size_t kMinSize = kSmpHeaderSize + kSmpDataSize;
  if (b.size() < kMinSize) return too_short("SMP", kMinSize, b.size());
  auto header = decode_mad_header(b);
  if (!header) return header.error();
  const MadHeader& h = *header;
  Smp smp;
  SmpHeader& s = smp.header;
  if (h.mgmt_class == mgmt_class::kSubnDirectedRoute) {
    s.directed_route = true;
  } else if (h.mgmt_class != mgmt_class::kSubnLidRouted) {
    return DecodeError{"SMP: management class " + std::to_string(h.mgmt_class) +
                       " is neither 0x01 nor 0x81"};
  }
  s.method = h.method;
  s.tid = h.tid;
  s.attr_id = h.attr_id;
  s.attr_mod = h.attr_mod;
  s.m_key = wire::get64(b, 24);
  std::copy_n(b.begin() + kSmpHeaderSize, kSmpDataSize, smp.data.begin());
  if (!s.directed_route) {
    s.status = h.status;
    return smp;
  }
  s.direction = (h.status & 0x8000) != 0;
  s.status = h.status & 0x7FFF;
  s.hop_pointer = static_cast<std::uint8_t>(h.class_specific >> 8);
  s.hop_count = static_cast<std::uint8_t>(h.class_specific & 0xFF);
  if (s.hop_count >= kSmpMaxHops) {
    return DecodeError{"directed-route SMP: hop count " + std::to_string(s.hop_count) +
                       " exceeds 63"};
  }
  const std::size_t used = s.hop_count + 1U;
  if (b.size() < kReturnPathOffset + used) {
    return too_short("directed-route SMP paths", kReturnPathOffset + used, b.size());
  }
  s.dr_slid = wire::get16(b, 32);
  s.dr_dlid = wire::get16(b, 34);
  std::copy_n(b.begin() + kInitialPathOffset, used, s.initial_path.begin());
  std::copy_n(b.begin() + kReturnPathOffset, used, s.return_path.begin());
  return smp;
}

MadBuffer build_smp_get_lid_routed(std::uint64_t tid, std::uint16_t attr_id,
                                   std::uint32_t attr_mod) {
  SmpHeader s;
  s.method = method::kGet;
  s.tid = tid;
  s.attr_id = attr_id;
  s.attr_mod = attr_mod;
  return encode_smp(s, {});
}

MadBuffer build_smp_get_directed(std::uint64_t tid, std::uint16_t attr_id, std::uint32_t attr_mod,
                                 std::span<const std::uint8_t> path) {
  if (path.size() >= kSmpMaxHops) {
    throw std::length_error("directed route of " + std::to_string(path.size()) +
                            " hops exceeds 63");
  }
  SmpHeader s;
  s.directed_route = true;
  s.method = method::kGet;
  s.tid = tid;
  s.attr_id = attr_id;
  s.attr_mod = attr_mod;
  s.hop_count = static_cast<std::uint8_t>(path.size());
  std::copy(path.begin(), path.end(), s.initial_path.begin() + 1);
  return encode_smp(s, {});
}

}  // namespace ibat::mad
