// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_sa_table on arbitrary bytes (a whole received message) must return a
// table or an error with a reason without reading out of bounds; a table's records must lie inside
// the message at AttributeOffset strides, fill it to its end, stay within the bound, and each
// decode as a PathRecord (64-byte records) or a NodeRecord (108-byte ones). sa_table_records (the
// count a GetTable's timer uses) never exceeds what the message holds, and equals a whole table's.
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/node_record.h"
#include "mad/path_record.h"
#include "mad/sa_table.h"

namespace {

constexpr std::size_t kMaxRecords = 64;

template <class Decode>
void check(std::span<const std::uint8_t> bytes, std::size_t record_size, Decode decode_record) {
  auto table = ibat::mad::decode_sa_table(bytes, record_size, kMaxRecords);
  if (!table) {
    if (table.error().message.empty()) __builtin_trap();
    return;
  }
  if (table->count > kMaxRecords || table->message.data() != bytes.data()) __builtin_trap();
  if (table->stride != 0) {
    if (table->stride < record_size) __builtin_trap();
    if (ibat::mad::kSaHeaderSize + table->count * table->stride != bytes.size()) __builtin_trap();
  }
  for (std::size_t i = 0; i < table->count; ++i) {
    const auto record = table->record(i);
    if (record.data() < bytes.data() || record.data() + record.size() > bytes.data() + bytes.size()) __builtin_trap();
    if (!decode_record(record)) __builtin_trap();
  }
  if (table->stride != 0 && ibat::mad::sa_table_records(bytes) != table->count) __builtin_trap();
  // A tighter bound refuses exactly the tables that exceed it.
  auto tight = ibat::mad::decode_sa_table(bytes, record_size, 3);
  if (tight.ok() != (table->count <= 3)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const std::size_t records = ibat::mad::sa_table_records(bytes);
  if (size < ibat::mad::kSaHeaderSize ? records != 0 : records * 8 > size - ibat::mad::kSaHeaderSize) __builtin_trap();
  check(bytes, ibat::mad::kPathRecordSize, [](auto r) { return ibat::mad::decode_path_record(r).ok(); });
  check(bytes, ibat::mad::kNodeRecordSize, [](auto r) { return ibat::mad::decode_node_record(r).ok(); });
  return 0;
}
