// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: arbitrary bytes as a shared path table. The first byte picks the mode: odd =
// the bytes are the whole mapping (header included); even = a valid header for a slot count the
// second byte picks, followed by the bytes as slots. Lookups of keys taken from the bytes (so hits
// are reachable) must stay inside the mapping (ASan) and answer only records of the key asked for
// whose DLID is unicast (never 0) and the same in the fields and the wire record.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shm/path_table_reader.h"
#include "shm/path_table_writer.h"

namespace {

using namespace ibat::shm;

void check(const PathTableReader& reader, const TableKey& key) {
  auto hit = reader.lookup(key);
  if (!hit) return;
  const ibat::core::PathRecord path = hit->path.decode();
  PathFields fields;
  std::memcpy(&fields, hit->path.fields, sizeof fields);
  if (!path.dlid.is_valid_unicast() || fields.dlid != path.dlid.value || hit->slot >= reader.slot_count()) std::abort();
  if (!(TableKey::of(path.sgid, path.dgid, path.pkey) == key)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::vector<std::uint64_t> memory;
  std::size_t table_size = 0;
  if (data[0] & 1) {
    table_size = size - 1;
    memory.assign((table_size + 7) / 8, 0);
    std::memcpy(memory.data(), data + 1, table_size);
  } else {
    const std::uint32_t slots = kMinSlots << (data[1] % 4);
    memory.assign((table_bytes(slots) + 7) / 8, 0);
    PathTableWriter writer(memory.data(), slots);  // a valid header; slots then overwritten
    const std::size_t body = std::min(size - 2, table_bytes(slots) - sizeof(TableHeader));
    std::memcpy(reinterpret_cast<std::byte*>(memory.data()) + sizeof(TableHeader), data + 2, body);
    table_size = table_bytes(slots);
  }
  std::string error;
  auto reader = PathTableReader::open(memory.data(), table_size, error);
  if (!reader) {
    if (error.empty()) std::abort();
    return 0;
  }
  // Keys as they appear in each slot's bytes, and one that is nowhere.
  const auto* slots = reinterpret_cast<const TableSlot*>(reinterpret_cast<const std::byte*>(memory.data()) +
                                                         sizeof(TableHeader));
  for (std::uint32_t i = 0; i < reader->slot_count() && i < 64; ++i) {
    TableKey key{{slots[i].record[kRecordSgidWord].load(), slots[i].record[kRecordSgidWord + 1].load()},
                 {slots[i].record[kRecordDgidWord].load(), slots[i].record[kRecordDgidWord + 1].load()},
                 static_cast<std::uint16_t>(slots[i].key_bits.load())};
    check(*reader, key);
  }
  check(*reader, TableKey{});
  return 0;
}
