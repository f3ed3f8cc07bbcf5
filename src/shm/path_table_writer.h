// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableWriter: the single writer of a shared path table (ibatd). It formats the memory, then
// publishes, replaces and removes paths slot by slot under each slot's sequence counter, and
// invalidates everything at once by bumping the table generation. It keeps no copy of the table:
// where a key is and whether a slot is in use it reads back from the slots, which only it writes.
// It can copy what it holds into another table, larger or smaller, and then mark itself moved
// (TableFile::grow, TableFile::shrink).
// Not thread-safe: one writer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "shm/path_table_layout.h"

namespace ibat::shm {

class PathTableWriter {
 public:
  // Formats `memory` (table_bytes(slot_count) bytes, 8-byte aligned, zeroed: a new file or a
  // zeroed buffer; only the header is written, so untouched slots cost no page) as an empty table
  // of `generation` (never 0). slot_count must be a power of two within [kMinSlots, kMaxSlots].
  PathTableWriter(void* memory, std::uint32_t slot_count, std::uint64_t generation = 1);

  // Publishes `path` (servable, or it is refused) under `key`, replacing what the key had;
  // `produced_ms`: CLOCK_MONOTONIC ms when the SA produced it; `expiry`: the writer's own word kept
  // with it (TableSlot::expiry). False when refused or when the key's probe window is full: the key
  // then stays unpublished.
  bool publish(const TableKey& key, const core::PathRecord& path, std::uint64_t produced_ms,
               std::uint64_t expiry = 0);
  // Unpublishes `key`; false if it was not published.
  bool remove(const TableKey& key);
  // Unpublishes what `slot` holds, if it holds `expiry`'s path (the expiry it was published with);
  // false otherwise.
  bool remove_if_expiry(std::uint32_t slot, std::uint64_t expiry);
  // Unpublishes everything at once (SM change, flush, policy change).
  void clear();
  // What requests without an SGID or a P_Key stand for (the header's local_gid / default_pkey).
  // A change also unpublishes everything (a new generation): readers cache the defaults per generation.
  void set_defaults(const core::Gid& local_gid, core::Pkey default_pkey);

  // Whether publishing the new key `key` should wait for a larger table: it would take the load
  // past kMaxLoad, or its probe window is full. False for a key already published.
  bool wants_larger_table_for(const TableKey& key) const;
  // Writes every published path (with its expiry) and the defaults into `other` (a new table no
  // reader maps yet, larger or smaller; a path whose probe window is full there is left out).
  void copy_into(PathTableWriter& other) const;
  // Tells this table's readers that another table replaced it: sets `moved`, then a new generation
  // empties it. Nothing is written to it afterwards.
  void mark_moved();

  // The key published in `slot` during `generation`, if it is still there.
  std::optional<TableKey> key_at(std::uint32_t slot, std::uint64_t generation) const;
  bool contains(const TableKey& key) const { return find(key).has_value(); }
  // The slot that holds `key`, if published.
  std::optional<std::uint32_t> slot_of(const TableKey& key) const { return find(key); }
  // The expiry `slot`'s path was published with, if the slot holds one.
  std::optional<std::uint64_t> expiry_in(std::uint32_t slot) const;
  std::size_t size() const { return size_; }
  std::uint32_t slot_count() const { return mask_ + 1; }
  std::uint64_t generation() const { return generation_; }

 private:
  // The slot of `key`'s probe window that holds it, if any.
  std::optional<std::uint32_t> find(const TableKey& key) const;
  // The free slot of `key`'s probe window, if any.
  std::optional<std::uint32_t> free_slot(const TableKey& key) const;
  bool live(std::uint32_t slot) const;
  TableKey key_in(std::uint32_t slot) const;  // of a live slot
  bool insert(const TableKey& key, const SlotPath& path, std::uint64_t produced_ms, std::uint64_t expiry);
  void write_slot(std::uint32_t slot, const TableKey& key, const SlotPath& path, std::uint64_t produced_ms,
                  std::uint64_t expiry);
  void kill_slot(std::uint32_t slot);  // unpublishes a live slot's path (size_ too)

  TableHeader* header_;
  TableSlot* slots_;
  std::uint32_t mask_;
  std::uint64_t generation_;
  std::size_t size_ = 0;  // live slots
};

}  // namespace ibat::shm
