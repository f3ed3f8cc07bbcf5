// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Multi-record SA responses (GetTableResp, IBA 15.2.5): the SA header, then records every
// AttributeOffset x 8 bytes to the end of the message. A long answer is one RMPP transfer that the
// MAD layer reassembles (docs/fabric.md), so the message may be far longer than one MAD; the
// number of records is what its length holds, bounded by the caller's maximum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/sa_mad.h"

namespace ibat::mad {

// A decoded table. `message` views the caller's buffer and is valid only while that buffer lives.
struct SaTable {
  MadHeader header;
  SaHeader sa;
  std::span<const std::uint8_t> message;
  std::size_t stride = 0;  // bytes from one record to the next (AttributeOffset x 8)
  std::size_t count = 0;

  // Record i (< count): `stride` bytes at 56 + i x stride.
  std::span<const std::uint8_t> record(std::size_t i) const {
    return message.subspan(kSaHeaderSize + i * stride, stride);
  }
};

// Decodes a whole received message of `record_size`-byte records (e.g. 64 for PathRecord). An
// error, with the reason, if it is shorter than the SA header, if AttributeOffset is shorter than
// one record, if the data does not end on a record boundary (a truncated message) or if it holds
// more than `max_records`. AttributeOffset 0 is an empty table (what OpenSM sends for no records).
Result<SaTable> decode_sa_table(std::span<const std::uint8_t> message, std::size_t record_size,
                                std::size_t max_records);

// The whole records a received table `message` holds by its AttributeOffset (a truncated last one
// not counted); 0 when it has none or its SA header cannot be read. For timers, which need the
// SA's work rather than the records themselves (those are read with decode_sa_table).
std::size_t sa_table_records(std::span<const std::uint8_t> message);

// A SubnAdmGetTable MAD for `attr_id` carrying the query `record` with the given component mask.
MadBuffer build_sa_get_table(std::uint64_t tid, std::uint16_t attr_id, std::span<const std::uint8_t> record,
                             std::uint64_t component_mask);

}  // namespace ibat::mad
