// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test helper: writes classic pcap bytes (either byte order, micro/nano magic, any link type) and
// wraps payloads in Linux cooked v1/v2 or IPoIB pseudo headers, so tests can build capture files.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ibat::ipoib::test {

class PcapBuilder {
 public:
  PcapBuilder(std::uint32_t link_type, bool big_endian = false, bool nanosecond = false,
              std::uint32_t snaplen = 262144)
      : big_endian_(big_endian) {
    u32(nanosecond ? 0xA1B23C4D : 0xA1B2C3D4);
    u16(2);
    u16(4);
    u32(0);  // thiszone
    u32(0);  // sigfigs
    u32(snaplen);
    u32(link_type);
  }

  // Appends a record whose captured length field says `caplen` (defaults to the frame size).
  PcapBuilder& record(std::span<const std::uint8_t> frame, std::uint32_t ts_sec = 0, std::uint32_t ts_frac = 0) {
    return record_with_caplen(frame, static_cast<std::uint32_t>(frame.size()), ts_sec, ts_frac);
  }
  PcapBuilder& record_with_caplen(std::span<const std::uint8_t> frame, std::uint32_t caplen,
                                  std::uint32_t ts_sec = 0, std::uint32_t ts_frac = 0) {
    u32(ts_sec);
    u32(ts_frac);
    u32(caplen);
    u32(static_cast<std::uint32_t>(frame.size()));
    bytes_.insert(bytes_.end(), frame.begin(), frame.end());
    return *this;
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  void u16(std::uint16_t v) {
    for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (big_endian_ ? 8 - 8 * i : 8 * i)));
  }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (big_endian_ ? 24 - 8 * i : 8 * i)));
  }
  bool big_endian_;
  std::vector<std::uint8_t> bytes_;
};

inline void append_be16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

// LINKTYPE_LINUX_SLL: packet type, ARPHRD_INFINIBAND, address length 20, 8 address bytes, protocol.
inline std::vector<std::uint8_t> sll_frame(std::uint16_t protocol, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> f;
  append_be16(f, 0);
  append_be16(f, 32);
  append_be16(f, 20);
  for (int i = 0; i < 8; ++i) f.push_back(static_cast<std::uint8_t>(0x80 + i));
  append_be16(f, protocol);
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

// LINKTYPE_LINUX_SLL2: protocol, reserved, ifindex, ARPHRD_INFINIBAND, packet type, addr len, 8 bytes.
inline std::vector<std::uint8_t> sll2_frame(std::uint16_t protocol, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> f;
  append_be16(f, protocol);
  append_be16(f, 0);
  f.insert(f.end(), {0, 0, 0, 5});  // interface index
  append_be16(f, 32);
  f.push_back(0);
  f.push_back(20);
  for (int i = 0; i < 8; ++i) f.push_back(static_cast<std::uint8_t>(0x80 + i));
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

// LINKTYPE_IPOIB: 40-byte pseudo-header (zero first bytes: destination address only) + type + reserved.
inline std::vector<std::uint8_t> ipoib_frame(std::uint16_t protocol, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> f(40, 0);
  f[20] = 0x80;
  append_be16(f, protocol);
  append_be16(f, 0);
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

}  // namespace ibat::ipoib::test
