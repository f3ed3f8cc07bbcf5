// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Classic pcap reader and IPoIB ARP scan (see pcap.h).
#include "ipoib/pcap.h"

#include <algorithm>

#include "wire/byte_order.h"

namespace ibat::ipoib {
namespace {

constexpr std::uint32_t kMagicMicro = 0xA1B2C3D4;
constexpr std::uint32_t kMagicNano = 0xA1B23C4D;
constexpr std::uint32_t kMagicMicroSwapped = 0xD4C3B2A1;
constexpr std::uint32_t kMagicNanoSwapped = 0x4D3CB2A1;

constexpr std::size_t kSllHeaderSize = 16;
constexpr std::size_t kSll2HeaderSize = 20;
constexpr std::size_t kIpoibPseudoHeaderSize = 40 + 4;

std::uint32_t load_le32(std::span<const std::uint8_t> b, std::size_t at) {
  return std::uint32_t{b[at]} | (std::uint32_t{b[at + 1]} << 8) | (std::uint32_t{b[at + 2]} << 16) |
         (std::uint32_t{b[at + 3]} << 24);
}

// A header field: little-endian, or big-endian when the magic says the writer was big-endian.
std::uint32_t load_u32(std::span<const std::uint8_t> b, std::size_t at, bool big_endian) {
  return big_endian ? wire::get32(b, at) : load_le32(b, at);
}

std::string where(std::size_t record, std::size_t offset) {
  return "pcap record #" + std::to_string(record) + " at offset " + std::to_string(offset) + ": ";
}

}  // namespace

std::variant<PcapReader, DecodeError> PcapReader::open(std::span<const std::uint8_t> file) {
  if (file.size() < kPcapFileHeaderSize)
    return DecodeError{"pcap: file of " + std::to_string(file.size()) +
                       " bytes is shorter than the 24-byte file header"};
  PcapReader r;
  r.file_ = file;
  // Fields are read little-endian and swapped when the magic says the writer was big-endian.
  switch (load_le32(file, 0)) {
    case kMagicMicro: break;
    case kMagicNano: r.nanosecond_ = true; break;
    case kMagicMicroSwapped: r.swapped_ = true; break;
    case kMagicNanoSwapped: r.swapped_ = r.nanosecond_ = true; break;
    default: return DecodeError{"pcap: offset 0: not a classic pcap file (unknown magic number)"};
  }
  auto u32 = [&](std::size_t at) { return load_u32(file, at, r.swapped_); };
  const std::uint32_t version = u32(4);
  const std::uint16_t major = static_cast<std::uint16_t>(r.swapped_ ? (version >> 16) : (version & 0xFFFF));
  if (major != 2)
    return DecodeError{"pcap: offset 4: unsupported major version " + std::to_string(major) + " (expected 2)"};
  r.snaplen_ = u32(16);
  const std::uint32_t network = u32(20) & 0xFFFF;  // upper bits carry FCS information
  switch (network) {
    case static_cast<std::uint32_t>(LinkType::linux_sll):
    case static_cast<std::uint32_t>(LinkType::ipoib):
    case static_cast<std::uint32_t>(LinkType::linux_sll2):
      r.link_type_ = static_cast<LinkType>(network);
      break;
    default:
      return DecodeError{"pcap: offset 20: link type " + std::to_string(network) +
                         " is not Linux cooked (113, 276) or IPoIB (242)"};
  }
  return r;
}

std::variant<std::optional<PcapFrame>, DecodeError> PcapReader::next() {
  if (offset_ == file_.size()) return std::optional<PcapFrame>{};
  const std::size_t record = ++record_;
  const std::size_t at = offset_;
  if (file_.size() - at < kPcapRecordHeaderSize)
    return DecodeError{where(record, at) + "truncated record header (" + std::to_string(file_.size() - at) +
                       " of 16 bytes)"};
  auto u32 = [&](std::size_t pos) { return load_u32(file_, pos, swapped_); };
  const std::uint32_t ts_sec = u32(at);
  const std::uint32_t ts_frac = u32(at + 4);
  const std::uint32_t caplen = u32(at + 8);
  const std::uint32_t cap_limit = snaplen_ == 0 ? kMaxPcapRecordLength : std::min(snaplen_, kMaxPcapRecordLength);
  if (caplen > cap_limit)
    return DecodeError{where(record, at) + "captured length " + std::to_string(caplen) + " exceeds the limit " +
                       std::to_string(cap_limit)};
  const std::size_t data_at = at + kPcapRecordHeaderSize;
  if (file_.size() - data_at < caplen)
    return DecodeError{where(record, at) + "captured length " + std::to_string(caplen) + " runs past the end of file (" +
                       std::to_string(file_.size() - data_at) + " bytes left)"};
  const auto data = file_.subspan(data_at, caplen);
  offset_ = data_at + caplen;

  PcapFrame frame;
  frame.record = record;
  frame.offset = at;
  frame.timestamp_ns = std::uint64_t{ts_sec} * 1'000'000'000ULL + std::uint64_t{ts_frac} * (nanosecond_ ? 1 : 1000);
  std::size_t header = 0;
  switch (link_type_) {
    case LinkType::linux_sll:
      header = kSllHeaderSize;
      if (caplen >= header) frame.ether_type = wire::get16(data, 14);
      break;
    case LinkType::linux_sll2:
      header = kSll2HeaderSize;
      if (caplen >= header) frame.ether_type = wire::get16(data, 0);
      break;
    case LinkType::ipoib:
      header = kIpoibPseudoHeaderSize;
      if (caplen >= header) frame.ether_type = wire::get16(data, 40);
      break;
  }
  if (caplen < header)
    return DecodeError{where(record, at) + "captured length " + std::to_string(caplen) +
                       " is shorter than the " + std::to_string(header) + "-byte link-layer header"};
  frame.payload = data.subspan(header);
  return std::optional<PcapFrame>{frame};
}

std::variant<PcapArpScan, DecodeError> scan_pcap_arp(std::span<const std::uint8_t> file) {
  auto opened = PcapReader::open(file);
  if (auto* e = std::get_if<DecodeError>(&opened)) return *e;
  auto& reader = std::get<PcapReader>(opened);
  PcapArpScan scan;
  scan.link_type = reader.link_type();
  for (;;) {
    auto next = reader.next();
    if (auto* e = std::get_if<DecodeError>(&next)) return *e;
    const auto& frame = std::get<std::optional<PcapFrame>>(next);
    if (!frame) break;
    ++scan.records;
    // ARP for another hardware type (Ethernet on an "any" capture) is not ours: count, move on.
    const bool ipoib_arp = frame->ether_type == kEtherTypeArp && frame->payload.size() >= 2 &&
                           wire::get16(frame->payload, 0) == kArpHardwareInfiniband;
    if (!ipoib_arp) {
      ++scan.not_ipoib_arp;
      continue;
    }
    auto arp = decode_arp(frame->payload);
    if (auto* e = std::get_if<DecodeError>(&arp)) {
      scan.rejected.push_back(where(frame->record, frame->offset) + e->message);
      continue;
    }
    scan.arp.push_back(PcapArp{frame->record, frame->timestamp_ns, std::get<ArpPacket>(arp)});
  }
  return scan;
}

}  // namespace ibat::ipoib
