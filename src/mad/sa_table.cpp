// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Decoding of multi-record SA responses and the GetTable request builder.
#include "mad/sa_table.h"

#include <string>

namespace ibat::mad {

Result<SaTable> decode_sa_table(std::span<const std::uint8_t> message, std::size_t record_size,
                                std::size_t max_records) {
  auto mad = decode_sa_mad(message);
  if (!mad) return mad.error();
  SaTable table;
  table.header = mad->header;
  table.sa = mad->sa;
  table.message = message;
  table.stride = mad->sa.record_bytes();
  if (table.stride == 0) return table;
  if (table.stride < record_size) {
    return DecodeError{"SA table: AttributeOffset " + std::to_string(mad->sa.attr_offset) + " (" +
                       std::to_string(table.stride) + " bytes) is shorter than a " + std::to_string(record_size) +
                       "-byte record"};
  }
  const std::size_t data = message.size() - kSaHeaderSize;
  if (data % table.stride != 0) {
    return DecodeError{"SA table: " + std::to_string(data) + " data bytes are not a whole number of " +
                       std::to_string(table.stride) + "-byte records (truncated?)"};
  }
  table.count = data / table.stride;
  if (table.count > max_records) {
    return DecodeError{"SA table: " + std::to_string(table.count) + " records, more than the maximum of " +
                       std::to_string(max_records)};
  }
  return table;
}

std::size_t sa_table_records(std::span<const std::uint8_t> message) {
  const auto mad = decode_sa_mad(message);
  if (!mad || mad->sa.record_bytes() == 0) return 0;
  return (message.size() - kSaHeaderSize) / mad->sa.record_bytes();
}

MadBuffer build_sa_get_table(std::uint64_t tid, std::uint16_t attr_id, std::span<const std::uint8_t> record,
                             std::uint64_t component_mask) {
  SaHeader sa;
  sa.component_mask = component_mask;
  return build_sa_mad(sa_request_header(method::kGetTable, tid, attr_id), sa, record);
}

}  // namespace ibat::mad
