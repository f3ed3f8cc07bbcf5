// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA MADs (IBA 15.2.1): the common header, the RMPP header, SM_Key, AttributeOffset and
// ComponentMask, followed by up to 200 bytes of record data. Of a GET or SET answer ibat reads only
// the first record; a GetTable answer (RMPP, reassembled by the MAD layer) is read with sa_table.h.
#pragma once

#include <cstdint>
#include <span>

#include "mad/mad_header.h"

namespace ibat::mad {

struct RmppHeader {
  std::uint8_t version = 0;
  std::uint8_t type = 0;
  std::uint8_t resp_time_flags = 0;  // RRespTime (5 bits) | RMPPFlags (3 bits)
  std::uint8_t status = 0;
  std::uint32_t seg_num = 0;
  std::uint32_t paylen_newwin = 0;
  bool operator==(const RmppHeader&) const = default;
};

struct SaHeader {
  RmppHeader rmpp;
  std::uint64_t sm_key = 0;
  std::uint16_t attr_offset = 0;  // record size in 8-byte words; 0 in a response = no record
  std::uint16_t reserved = 0;
  std::uint64_t component_mask = 0;

  std::size_t record_bytes() const { return std::size_t{attr_offset} * 8; }
  bool operator==(const SaHeader&) const = default;
};

// A decoded SA MAD. `data` views the caller's buffer from byte 56 to its end (at most 200 bytes);
// it is valid only while that buffer lives.
struct SaMad {
  MadHeader header;
  SaHeader sa;
  std::span<const std::uint8_t> data;
};

Result<SaMad> decode_sa_mad(std::span<const std::uint8_t> bytes);

// The first record of a decoded SA MAD: AttributeOffset*8 bytes of data. An error if the offset is
// 0 (no record) or if the record does not fit in the bytes received. Later bytes are never read.
Result<std::span<const std::uint8_t>> first_record(const SaMad& mad);

// A 256-byte SA MAD: header, SA header and `record` (at most 200 bytes) copied into the data
// area, rest zero. Throws std::length_error if the record is longer than 200 bytes.
MadBuffer build_sa_mad(const MadHeader& header, const SaHeader& sa,
                       std::span<const std::uint8_t> record);

// The MAD header of an SA request: class 0x03, version 2, the given method, TID and attribute.
MadHeader sa_request_header(std::uint8_t method, std::uint64_t tid, std::uint16_t attr_id,
                            std::uint32_t attr_mod = 0);

}  // namespace ibat::mad
