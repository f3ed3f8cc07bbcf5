// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of SA MADs (common header + SA header + record data).
#include "mad/sa_mad.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "wire/byte_order.h"

namespace ibat::mad {

Result<SaMad> decode_sa_mad(std::span<const std::uint8_t> b) {
  if (b.size() < kSaHeaderSize) return too_short("SA MAD", kSaHeaderSize, b.size());
  auto header = decode_mad_header(b);
  if (!header) return header.error();
  SaMad mad;
  mad.header = *header;
  mad.sa.rmpp.version = b[24];
  mad.sa.rmpp.type = b[25];
  mad.sa.rmpp.resp_time_flags = b[26];
  mad.sa.rmpp.status = b[27];
  mad.sa.rmpp.seg_num = wire::get32(b, 28);
  mad.sa.rmpp.paylen_newwin = wire::get32(b, 32);
  mad.sa.sm_key = wire::get64(b, 36);
  mad.sa.attr_offset = wire::get16(b, 44);
  mad.sa.reserved = wire::get16(b, 46);
  mad.sa.component_mask = wire::get64(b, 48);
  mad.data = b.subspan(kSaHeaderSize, std::min(b.size(), kMadSize) - kSaHeaderSize);
  return mad;
}

Result<std::span<const std::uint8_t>> first_record(const SaMad& mad) {
  const std::size_t size = mad.sa.record_bytes();
  if (size == 0) return DecodeError{"SA MAD: attribute offset 0, no record"};
  if (mad.data.size() < size) return too_short("SA record", size, mad.data.size());
  return mad.data.first(size);
}

MadBuffer build_sa_mad(const MadHeader& header, const SaHeader& sa,
                       std::span<const std::uint8_t> record) {
  if (record.size() > kSaDataSize) {
    throw std::length_error("SA record of " + std::to_string(record.size()) +
                            " bytes exceeds the 200-byte SA data area");
  }
  MadBuffer mad{};
  std::span<std::uint8_t> b(mad);
  encode_mad_header(header, b.first<kMadHeaderSize>());
  wire::put8(b, 24, sa.rmpp.version);
  wire::put8(b, 25, sa.rmpp.type);
  wire::put8(b, 26, sa.rmpp.resp_time_flags);
  wire::put8(b, 27, sa.rmpp.status);
  wire::put32(b, 28, sa.rmpp.seg_num);
  wire::put32(b, 32, sa.rmpp.paylen_newwin);
  wire::put64(b, 36, sa.sm_key);
  wire::put16(b, 44, sa.attr_offset);
  wire::put16(b, 46, sa.reserved);
  wire::put64(b, 48, sa.component_mask);
  std::copy(record.begin(), record.end(), mad.begin() + kSaHeaderSize);
  return mad;
}

MadHeader sa_request_header(std::uint8_t method, std::uint64_t tid, std::uint16_t attr_id,
                            std::uint32_t attr_mod) {
  MadHeader h;
  h.mgmt_class = mgmt_class::kSubnAdm;
  h.class_version = kSaClassVersion;
  h.method = method;
  h.tid = tid;
  h.attr_id = attr_id;
  h.attr_mod = attr_mod;
  return h;
}

}  // namespace ibat::mad
