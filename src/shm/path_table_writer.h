// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableWriter: the single writer of a shared path table (ibatd). It formats the memory, then
// publishes, replaces and removes paths slot by slot under each slot's sequence counter, and
// invalidates everything at once by bumping the table generation. It keeps its own index of what
// it published, so it never reads back what readers see. Not thread-safe: one writer thread.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "shm/path_table_layout.h"

namespace ibat::shm {

class PathTableWriter {
 public:
  // Formats `memory` (table_bytes(slot_count) bytes, 8-byte aligned) as an empty table.
  // slot_count must be a power of two within [kMinSlots, kMaxSlots].
  PathTableWriter(void* memory, std::uint32_t slot_count);

  // Publishes `path` (servable, or it is refused) under `key`, replacing what the key had;
  // `produced_ms`: CLOCK_MONOTONIC ms when the SA produced it. False when refused or when the key's
  // probe window is full: the key then stays unpublished.
  bool publish(const TableKey& key, const core::PathRecord& path, std::uint64_t produced_ms);
  // Unpublishes `key`; false if it was not published.
  bool remove(const TableKey& key);
  // Unpublishes everything at once (SM change, flush, policy change).
  void clear();
  // What requests without an SGID or a P_Key stand for (the header's local_gid / default_pkey).
  // A change also unpublishes everything (a new generation): readers cache the defaults per generation.
  void set_defaults(const core::Gid& local_gid, core::Pkey default_pkey);

  // The key published in `slot` during `generation`, if it is still there.
  std::optional<TableKey> key_at(std::uint32_t slot, std::uint64_t generation) const;
  bool contains(const TableKey& key) const { return index_.count(key) != 0; }
  std::size_t size() const { return index_.size(); }
  std::uint32_t slot_count() const { return mask_ + 1; }
  std::uint64_t generation() const { return generation_; }

 private:
  struct KeyHash {
    std::size_t operator()(const TableKey& k) const noexcept { return static_cast<std::size_t>(hash_key(k)); }
  };
  void write_slot(std::uint32_t slot, const TableKey& key, const SlotPath& path, std::uint64_t produced_ms);
  void kill_slot(std::uint32_t slot);

  TableHeader* header_;
  TableSlot* slots_;
  std::uint32_t mask_;
  std::uint64_t generation_ = 1;
  std::vector<bool> live_;  // per slot: holds a published key in this generation
  std::vector<TableKey> keys_;
  std::unordered_map<TableKey, std::uint32_t, KeyHash> index_;
};

}  // namespace ibat::shm
