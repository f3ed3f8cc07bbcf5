// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RMPP wire format of the lab's kernel MAD layer twin: header fields, segments, control MADs (see rmpp.h).
#include "rmpp.h"

#include <algorithm>

#include "big_endian.h"

namespace ibat::umad_twin {
namespace {

constexpr std::size_t kClassOffset = 1;
constexpr std::size_t kMethodOffset = 3;
constexpr std::size_t kTidOffset = 8;
constexpr std::size_t kRmppVersionOffset = 24;
constexpr std::size_t kRmppTypeOffset = 25;
constexpr std::size_t kRmppFlagsOffset = 26;
constexpr std::size_t kRmppStatusOffset = 27;
constexpr std::size_t kSegmentOffset = 28;
constexpr std::size_t kPayloadOffset = 32;
constexpr std::uint8_t kResponseBit = 0x80;
constexpr std::uint8_t kTrapRepress = 0x07;


}  // namespace

std::size_t data_offset(std::uint8_t mgmt_class) {
  if (mgmt_class == 0x03) return 56;                                          // SA
  if (mgmt_class == 0x06 || mgmt_class == 0x10 || mgmt_class == 0x12) return 64;  // device mgmt, adm, BIS
  if (mgmt_class >= 0x30 && mgmt_class <= 0x4f) return 40;                     // vendor range 2
  return kMadHeaderBytes;
}

std::uint8_t mgmt_class(std::span<const std::uint8_t> mad) { return mad[kClassOffset]; }
std::uint8_t method(std::span<const std::uint8_t> mad) { return mad[kMethodOffset]; }

std::uint64_t tid(std::span<const std::uint8_t> mad) {
  return std::uint64_t{get32(mad, kTidOffset)} << 32 | get32(mad, kTidOffset + 4);
}
void set_tid(std::span<std::uint8_t> mad, std::uint64_t value) {
  put32(mad, kTidOffset, static_cast<std::uint32_t>(value >> 32));
  put32(mad, kTidOffset + 4, static_cast<std::uint32_t>(value));
}

bool is_response(std::span<const std::uint8_t> mad) {
  return (method(mad) & kResponseBit) != 0 || method(mad) == kTrapRepress;
}
bool rmpp_class(std::uint8_t cls) {
  return cls == 0x03 || cls == 0x06 || cls == 0x10 || cls == 0x12 || (cls >= 0x30 && cls <= 0x4f);
}
bool rmpp_active(std::span<const std::uint8_t> mad) {
  // The kernel looks at the ACTIVE flag only: OpenSM leaves RMPPVersion 0 for the kernel to fill in.
  return mad.size() >= kRmppHeaderEnd && rmpp_class(mgmt_class(mad)) && (mad[kRmppFlagsOffset] & kRmppFlagActive);
}
std::uint8_t rmpp_version(std::span<const std::uint8_t> mad) { return mad[kRmppVersionOffset]; }
std::uint8_t rmpp_type(std::span<const std::uint8_t> mad) { return mad[kRmppTypeOffset]; }
std::uint8_t rmpp_flags(std::span<const std::uint8_t> mad) { return mad[kRmppFlagsOffset] & 0x07; }
std::uint8_t rmpp_status(std::span<const std::uint8_t> mad) { return mad[kRmppStatusOffset]; }
std::uint32_t segment_number(std::span<const std::uint8_t> mad) { return get32(mad, kSegmentOffset); }
std::uint32_t payload_length(std::span<const std::uint8_t> mad) { return get32(mad, kPayloadOffset); }

std::vector<Bytes> segment(std::span<const std::uint8_t> message) {
  const std::size_t header = std::min(data_offset(mgmt_class(message)), message.size());
  const std::size_t data = message.size() - header;
  const std::size_t per_segment = kMadBytes - header;
  const std::size_t count = std::max<std::size_t>(1, (data + per_segment - 1) / per_segment);
  const std::size_t pad = count * per_segment - data;
  std::vector<Bytes> segments;
  segments.reserve(count);
  for (std::size_t n = 1; n <= count; ++n) {
    Bytes seg(kMadBytes, 0);
    std::copy_n(message.begin(), header, seg.begin());
    const std::size_t from = header + (n - 1) * per_segment;
    const std::size_t take = std::min(per_segment, message.size() - std::min(message.size(), from));
    std::copy_n(message.begin() + static_cast<std::ptrdiff_t>(from), take, seg.begin() + static_cast<std::ptrdiff_t>(header));
    seg[kRmppVersionOffset] = kRmppVersion;
    seg[kRmppTypeOffset] = kRmppTypeData;
    std::uint8_t flags = kRmppFlagActive;
    std::uint32_t paylen = 0;
    if (n == 1) {
      flags |= kRmppFlagFirst;
      paylen = static_cast<std::uint32_t>(count * kRmppPayloadPerSegment - pad);
    }
    if (n == count) {
      flags |= kRmppFlagLast;
      paylen = static_cast<std::uint32_t>(kRmppPayloadPerSegment - pad);
    }
    seg[kRmppFlagsOffset] = static_cast<std::uint8_t>((seg[kRmppFlagsOffset] & 0xf8) | flags);
    seg[kRmppStatusOffset] = 0;
    put32(seg, kSegmentOffset, static_cast<std::uint32_t>(n));
    put32(seg, kPayloadOffset, paylen);
    segments.push_back(std::move(seg));
  }
  return segments;
}

Bytes control_mad(std::span<const std::uint8_t> received, std::uint8_t type, std::uint8_t status,
                  std::uint32_t segment, std::uint32_t window_last) {
  Bytes mad(kMadBytes, 0);
  const std::size_t header = std::min({data_offset(mgmt_class(received)), received.size(), kMadBytes});
  std::copy_n(received.begin(), header, mad.begin());
  mad[kMethodOffset] ^= kResponseBit;
  mad[kRmppVersionOffset] = kRmppVersion;
  mad[kRmppTypeOffset] = type;
  mad[kRmppFlagsOffset] = static_cast<std::uint8_t>((mad[kRmppFlagsOffset] & 0xf8) | kRmppFlagActive);
  mad[kRmppStatusOffset] = status;
  put32(mad, kSegmentOffset, segment);
  put32(mad, kPayloadOffset, window_last);
  return mad;
}

}  // namespace ibat::umad_twin
