// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableReader: looks paths up in a shared path table it may only read (libibat). open() checks
// the header (magic, version, sizes, slot count, bounds) before anything else is trusted; every
// lookup stays within the slots that header allows, whatever the bytes hold, never waits for the
// writer, and answers only a consistent record of the current generation whose GIDs and P_Key are
// the key's and whose DLID is a unicast LID, the same in the fields and the wire record (so never
// DLID 0). The rest of the record was checked by the writer (docs/shared-table.md).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// The table generation and the defaults that go with it (PathTableReader::defaults).
struct KeyDefaults {
  std::uint64_t generation = 0;  // 0: none read yet (a table generation is never 0)
  std::uint64_t local_gid[2] = {0, 0};
  std::uint16_t pkey = 0;
};

class PathTableReader {
 public:
  // A reader of the table in [memory, memory + size), or nullopt with `error` saying what is wrong.
  static std::optional<PathTableReader> open(const void* memory, std::size_t size, std::string& error);

  // The current table generation; what lookup() answers for.
  std::uint64_t generation() const { return header_->generation.load(std::memory_order_acquire); }

  // Fills `hit` with the published path of `key` and returns true; false when absent, being
  // rewritten, invalidated, or failing the checks above (`hit` then holds nothing of use).
  // `generation`: generation() read before the key was made (the defaults it used belong to it).
  // Always inlined: it is libibat's hot path, and the hit's words then stay in registers.
  [[gnu::always_inline]] bool lookup(const TableKey& key, std::uint64_t generation, TableHit& hit) const;
  bool lookup(const TableKey& key, TableHit& hit) const { return lookup(key, generation(), hit); }
  std::optional<TableHit> lookup(const TableKey& key) const {
    TableHit hit;
    if (!lookup(key, hit)) return std::nullopt;
    return hit;
  }
  // The current generation, then the defaults published for it: what a request without SGID /
  // P_Key stands for. The writer changes them only together with a new generation, so a client
  // may keep them for as long as generation() returns the same value.
  KeyDefaults defaults() const {
    constexpr auto acquire = std::memory_order_acquire;
    KeyDefaults d;
    d.generation = generation();
    d.local_gid[0] = header_->local_gid[0].load(acquire);
    d.local_gid[1] = header_->local_gid[1].load(acquire);
    d.pkey = static_cast<std::uint16_t>(header_->default_pkey.load(acquire));
    return d;
  }
  // The key of a request: its own SGID / P_Key, else the defaults (GIDs as their 16 bytes).
  static TableKey key_for(const KeyDefaults& defaults, const std::uint8_t* dgid, const std::uint8_t* sgid,
                          const std::uint16_t* pkey) {
    TableKey key;
    std::memcpy(key.dgid, dgid, 16);
    if (sgid) {
      std::memcpy(key.sgid, sgid, 16);
    } else {
      key.sgid[0] = defaults.local_gid[0];
      key.sgid[1] = defaults.local_gid[1];
    }
    key.pkey = pkey ? *pkey : defaults.pkey;
    return key;
  }
  TableKey key_for(const core::Gid& dgid, const core::Gid* sgid, const core::Pkey* pkey) const {
    return key_for(defaults(), dgid.raw.data(), sgid ? sgid->raw.data() : nullptr, pkey ? &pkey->value : nullptr);
  }

  std::uint32_t slot_count() const { return mask_ + 1; }
  // Whether a larger table has replaced this one at its path (the writer grew it). Set before the
  // generation that empties this table, so it is worth reading when generation() has changed.
  bool moved() const { return header_->moved.load(std::memory_order_acquire) != 0; }

 private:
  PathTableReader(const TableHeader* header, const TableSlot* slots, std::uint32_t mask)
      : header_(header), slots_(slots), mask_(mask) {}

  const TableHeader* header_;
  const TableSlot* slots_;
  std::uint32_t mask_;
};

namespace detail {

// The big-endian u16 at byte `offset` of the wire record, from the word that holds it.
constexpr std::uint16_t be16_at(const std::uint64_t (&record)[kRecordWords], std::size_t offset) {
  static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
  const std::size_t k = offset % 8;
  const std::uint64_t word = record[offset / 8];
  if constexpr (std::endian::native == std::endian::little) {
    const auto raw = static_cast<std::uint16_t>(word >> (8 * k));  // the two bytes, first one low
    return static_cast<std::uint16_t>(raw << 8 | raw >> 8);
  } else {
    return static_cast<std::uint16_t>(word >> (8 * (6 - k)));
  }
}

// What the reader vouches for beyond the key match: a unicast DLID, the same in both views, and the
// key's P_Key in both.
inline bool plausible(const SlotPath& path, std::uint16_t pkey) {
  PathFields f;
  std::memcpy(&f, path.fields, sizeof f);
  const std::uint16_t dlid = be16_at(path.record, kRecordDlidOffset);
  return f.dlid == dlid && core::Lid{dlid}.is_valid_unicast() && f.pkey == pkey &&
         be16_at(path.record, kRecordPkeyOffset) == pkey;
}

}  // namespace detail

// Slot read protocol: seq (acquire), the data words (acquire), seq again; the read counts only if
// both seq loads are equal and even. The record's GID words are compared with the key's and, when
// equal, taken from the key rather than loaded twice.
inline bool PathTableReader::lookup(const TableKey& key, std::uint64_t generation, TableHit& hit) const {
  constexpr auto acquire = std::memory_order_acquire;
  constexpr auto relaxed = std::memory_order_relaxed;
  std::uint32_t slot = home_slot(key, mask_);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, slot = (slot + 1) & mask_) {
    const TableSlot& s = slots_[slot];
    const std::uint64_t seq = s.seq.load(acquire);
    const std::uint64_t slot_generation = s.generation.load(acquire);
    // The key first, word by word (the record's GIDs): another key, the usual case when probing,
    // needs no more loads. A torn read can only make a wrong key look right; the seq check catches it.
    const bool same_key = s.record[kRecordDgidWord + 1].load(acquire) == key.dgid[1] &&
                          s.record[kRecordDgidWord].load(acquire) == key.dgid[0] &&
                          s.record[kRecordSgidWord + 1].load(acquire) == key.sgid[1] &&
                          s.record[kRecordSgidWord].load(acquire) == key.sgid[0] &&
                          s.key_bits.load(acquire) == (key.pkey | kSlotLive);
    if (!same_key) [[unlikely]] {
      if (slot_generation != generation && (seq & 1) == 0 && s.seq.load(relaxed) == seq)
        return false;  // unused in this generation: the end of the probe chain
      continue;
    }
    static_assert(kRecordDgidWord == 1 && kRecordSgidWord == 3 && kRecordWords == 8);
    hit.path.fields[0] = s.fields[0].load(acquire);
    hit.path.fields[1] = s.fields[1].load(acquire);
    hit.path.record[0] = s.record[0].load(acquire);
    hit.path.record[1] = key.dgid[0];
    hit.path.record[2] = key.dgid[1];
    hit.path.record[3] = key.sgid[0];
    hit.path.record[4] = key.sgid[1];
    hit.path.record[5] = s.record[5].load(acquire);
    hit.path.record[6] = s.record[6].load(acquire);
    hit.path.record[7] = s.record[7].load(acquire);
    hit.produced_ms = s.produced_ms.load(acquire);
    // The hints keep the compiler from treating the hit, the usual outcome, as the cold path.
    if ((seq & 1) != 0 || s.seq.load(relaxed) != seq) [[unlikely]] continue;  // torn: not this key
    if (slot_generation != generation) [[unlikely]] return false;            // unused in this generation
    if (!detail::plausible(hit.path, key.pkey)) [[unlikely]] return false;
    if (this->generation() != generation) [[unlikely]] return false;          // invalidated meanwhile
    hit.slot = slot;
    hit.generation = generation;
    return true;
  }
  return false;
}

}  // namespace ibat::shm
