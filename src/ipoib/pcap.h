// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Classic pcap file reader (both byte orders, micro- and nanosecond magic) for captures of IPoIB
// interfaces, and a scan that yields the IPoIB ARP packets inside. Link types: Linux cooked
// capture v1 (113) and v2 (276), and LINKTYPE_IPOIB (242: 40-byte GRH pseudo-header + 4-byte
// IPoIB header, as Wireshark reads it). Works on bytes in memory; every length is checked against
// the bytes present and capped, so a hostile file cannot make it read out of bounds or allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ipoib/arp.h"
#include "ipoib/decode_error.h"

namespace ibat::ipoib {

enum class LinkType : std::uint16_t { linux_sll = 113, ipoib = 242, linux_sll2 = 276 };

inline constexpr std::size_t kPcapFileHeaderSize = 24;
inline constexpr std::size_t kPcapRecordHeaderSize = 16;
// Largest record accepted whatever the file's snaplen says (libpcap's MAXIMUM_SNAPLEN).
inline constexpr std::uint32_t kMaxPcapRecordLength = 262144;

// One captured frame with its link-layer header removed.
struct PcapFrame {
  std::size_t record = 0;          // 1-based record number
  std::size_t offset = 0;          // file offset of the record header
  std::uint64_t timestamp_ns = 0;  // since the epoch
  std::uint16_t ether_type = 0;    // protocol carried (0x0806 for ARP)
  std::span<const std::uint8_t> payload;  // view into the file bytes
};

class PcapReader {
 public:
  // Validates the file header. The reader keeps a view of `file`, which must outlive it.
  static std::variant<PcapReader, DecodeError> open(std::span<const std::uint8_t> file);

  // The next frame, std::nullopt at a clean end of file, or an error naming record and offset.
  std::variant<std::optional<PcapFrame>, DecodeError> next();

  LinkType link_type() const { return link_type_; }
  std::uint32_t snaplen() const { return snaplen_; }

 private:
  PcapReader() = default;

  std::span<const std::uint8_t> file_;
  bool swapped_ = false;  // file written on a machine of the other byte order
  bool nanosecond_ = false;
  LinkType link_type_ = LinkType::linux_sll;
  std::uint32_t snaplen_ = 0;
  std::size_t offset_ = kPcapFileHeaderSize;
  std::size_t record_ = 0;
};

struct PcapArp {
  std::size_t record = 0;
  std::uint64_t timestamp_ns = 0;
  ArpPacket packet;
};

struct PcapArpScan {
  LinkType link_type = LinkType::linux_sll;
  std::size_t records = 0;       // frames read
  std::size_t not_ipoib_arp = 0; // other protocols, or ARP for another hardware type
  std::vector<PcapArp> arp;      // IPoIB ARP packets, in file order
  std::vector<std::string> rejected;  // IPoIB ARP frames that failed to decode, with record number
};

// Reads every frame and decodes the IPoIB ARP packets. A broken file structure is an error; a
// malformed ARP packet only lands in `rejected`.
std::variant<PcapArpScan, DecodeError> scan_pcap_arp(std::span<const std::uint8_t> file);

}  // namespace ibat::ipoib
