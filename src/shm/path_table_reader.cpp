// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableReader::open (see path_table_reader.h; lookups are inline there). The header fields are
// read once, at open(); only the generation and the defaults change afterwards.
#include "shm/path_table_reader.h"

#include <cstddef>
#include <cstring>

namespace ibat::shm {

std::optional<PathTableReader> PathTableReader::open(const void* memory, std::size_t size, std::string& error) {
  if (memory == nullptr || reinterpret_cast<std::uintptr_t>(memory) % alignof(TableHeader) != 0) {
    error = "path table mapping is not 8-byte aligned";
    return std::nullopt;
  }
  if (size < sizeof(TableHeader)) {
    error = "path table is " + std::to_string(size) + " bytes, shorter than its header";
    return std::nullopt;
  }
  struct {
    std::uint64_t magic;
    std::uint32_t version, header_size, slot_size, slot_count;
  } h;
  static_assert(sizeof h == offsetof(TableHeader, generation));
  std::memcpy(&h, memory, sizeof h);
  if (h.magic != kMagic) {
    error = "not an ibat path table (bad magic)";
    return std::nullopt;
  }
  if (h.version != kVersion || h.header_size != sizeof(TableHeader) || h.slot_size != sizeof(TableSlot)) {
    error = "path table version " + std::to_string(h.version) + " (header " + std::to_string(h.header_size) +
            " B, slot " + std::to_string(h.slot_size) + " B) is not version " + std::to_string(kVersion);
    return std::nullopt;
  }
  const std::uint32_t n = h.slot_count;
  if (n < kMinSlots || n > kMaxSlots || (n & (n - 1)) != 0) {
    error = "path table slot count " + std::to_string(n) + " is not a power of two in [16, 2^24]";
    return std::nullopt;
  }
  if (table_bytes(n) > size) {
    error = "path table of " + std::to_string(n) + " slots needs " + std::to_string(table_bytes(n)) +
            " bytes, the mapping has " + std::to_string(size);
    return std::nullopt;
  }
  const auto* base = static_cast<const std::byte*>(memory);
  return PathTableReader(reinterpret_cast<const TableHeader*>(base),
                         reinterpret_cast<const TableSlot*>(base + sizeof(TableHeader)), n - 1);
}

}  // namespace ibat::shm
