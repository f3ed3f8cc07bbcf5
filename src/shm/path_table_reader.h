// PathTableReader: looks paths up in a shared path table it may only read (libibat). open() checks
// the header (magic, version, sizes, slot count, bounds) before anything else is trusted; every
// lookup stays within the slots that header allows, whatever the bytes hold, never waits for the
// writer, and answers only a consistent record of the current generation whose GIDs and P_Key are
// the key's and whose DLID is a unicast LID, the same in the fields and the wire record (so never
// DLID 0). The rest of the record was checked by the writer (docs/shared-table.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "shm/path_table_layout.h"

namespace ibat::shm {

struct TableHit {
  SlotPath path;                    // as libibat hands it out
  std::uint32_t slot = 0;           // where it was found, for the hit report
  std::uint64_t generation = 0;     // the table generation it belongs to
  std::uint64_t produced_ms = 0;    // CLOCK_MONOTONIC ms when the SA produced the path
};

class PathTableReader {
 public:
  // A reader of the table in [memory, memory + size), or nullopt with `error` saying what is wrong.
  static std::optional<PathTableReader> open(const void* memory, std::size_t size, std::string& error);

  // Fills `hit` with the published path of `key` and returns true; false when absent, being
  // rewritten, invalidated, or failing the checks above (`hit` then holds nothing of use).
  bool lookup(const TableKey& key, TableHit& hit) const;
  std::optional<TableHit> lookup(const TableKey& key) const {
    TableHit hit;
    if (!lookup(key, hit)) return std::nullopt;
    return hit;
  }
  // The key of a request: its own SGID / P_Key, else the ones the daemon publishes as defaults.
  TableKey key_for(const core::Gid& dgid, const core::Gid* sgid, const core::Pkey* pkey) const {
    constexpr auto acquire = std::memory_order_acquire;
    TableKey key = TableKey::of(sgid ? *sgid : core::Gid{}, dgid,
                                pkey ? *pkey : core::Pkey{static_cast<std::uint16_t>(header_->default_pkey.load(acquire))});
    if (!sgid) {
      key.sgid[0] = header_->local_gid[0].load(acquire);
      key.sgid[1] = header_->local_gid[1].load(acquire);
    }
    return key;
  }

  std::uint32_t slot_count() const { return mask_ + 1; }

 private:
  PathTableReader(const TableHeader* header, const TableSlot* slots, std::uint32_t mask)
      : header_(header), slots_(slots), mask_(mask) {}

  const TableHeader* header_;
  const TableSlot* slots_;
  std::uint32_t mask_;
};

}  // namespace ibat::shm
