// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Layout of the shared path table (docs/shared-table.md): a header followed by fixed-size slots in
// one mapping that ibatd writes and libibat maps read-only. Zeroed bytes are an empty slot, so a new
// file's pages are touched only as slots are used. Every word a reader may read while the
// writer changes it is a std::atomic<std::uint64_t>; a slot is guarded by its own sequence counter
// (odd while it is being written) and belongs to the table generation it was written in. A slot
// holds the path as libibat hands it out (its ibat_path fields and the 64-byte wire PathRecord),
// finished by the writer, so that a hit is a guarded copy.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/types.h"

namespace ibat::shm {

inline constexpr std::uint64_t kMagic = 0x314D485354414249ULL;  // "IBATSHM1" little-endian
inline constexpr std::uint32_t kVersion = 4;
// Lookups and inserts look at most this many slots from a key's home slot.
inline constexpr std::uint32_t kMaxProbe = 16;
// A table holds at most one key per this many slots (load 1/2): probe windows then rarely fill,
// and a lookup of an absent key soon meets a slot unused in this generation.
inline constexpr std::uint32_t kSlotsPerKey = 2;
inline constexpr std::uint32_t kMinSlots = 16;
// A table moves to a smaller one (at a republish) only if that one has at most 1/kShrinkFactor of
// its slots, holding at most a quarter of its own: a few new paths do not grow it back at once.
inline constexpr std::uint32_t kShrinkFactor = 4;
inline constexpr std::uint32_t kMaxSlots = 1U << 24;

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

struct TableHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t header_size;  // sizeof(TableHeader): slots start here
  std::uint32_t slot_size;    // sizeof(TableSlot)
  std::uint32_t slot_count;   // a power of two
  std::atomic<std::uint64_t> generation;  // bumped to invalidate every slot at once; never 0
  // What a request without SGID / P_Key means: the local port GID and the daemon's default P_Key.
  std::atomic<std::uint64_t> local_gid[2];
  std::atomic<std::uint64_t> default_pkey;
  // Non-zero once a larger table has replaced this one at the same path (the writer grew it): set
  // before the generation that empties this one, so a reader that sees that generation maps the
  // path again.
  std::atomic<std::uint64_t> moved;
};

// Bits of TableSlot::key_bits besides the P_Key (low 16 bits).
inline constexpr std::uint64_t kSlotLive = 1ULL << 16;

// The wire PathRecord (IBA 15.2.5.16) as eight words; its DGID and SGID are the key's GID words.
inline constexpr std::size_t kRecordBytes = 64;
inline constexpr int kRecordWords = 8;
inline constexpr int kRecordDgidWord = 1;  // bytes 8-23
inline constexpr int kRecordSgidWord = 3;  // bytes 24-39
inline constexpr std::size_t kRecordDlidOffset = 40;  // big-endian u16
inline constexpr std::size_t kRecordPkeyOffset = 50;  // big-endian u16

// The fields of libibat's ibat_path from dlid to flow_label, in its layout (client/table_client.h
// checks that at compile time), so that a hit copies them as they are.
struct PathFields {
  std::uint16_t dlid, slid, pkey;
  std::uint8_t sl, mtu, rate, pkt_life, hop_limit, tclass;
  std::uint32_t flow_label;
};
static_assert(sizeof(PathFields) == 16);

struct TableSlot {
  std::atomic<std::uint64_t> seq;         // odd while the writer changes this slot
  std::atomic<std::uint64_t> generation;  // table generation this slot was written in
  std::atomic<std::uint64_t> key_bits;    // P_Key | kSlotLive
  std::atomic<std::uint64_t> fields[2];   // PathFields
  std::atomic<std::uint64_t> record[kRecordWords];  // the wire PathRecord: holds the key's GIDs
  std::atomic<std::uint64_t> produced_ms; // CLOCK_MONOTONIC ms when the SA produced the path
  // The writer's own word, kept with the path and copied with it when the table grows (ibatd: when
  // the path's TTL ends, so that it needs no map of its own); readers never read it.
  std::uint64_t expiry;
  std::uint64_t reserved;                 // 128 bytes: a slot is two whole cache lines
};

static_assert(sizeof(TableHeader) == 64);
static_assert(sizeof(TableSlot) == 128);

// Bytes a table of `slot_count` slots needs.
constexpr std::size_t table_bytes(std::uint32_t slot_count) {
  return sizeof(TableHeader) + std::size_t{slot_count} * sizeof(TableSlot);
}

// A table key: the path cache's (SGID, DGID, P_Key), as words.
struct TableKey {
  std::uint64_t sgid[2];
  std::uint64_t dgid[2];
  std::uint16_t pkey;

  static TableKey of(const core::Gid& sgid, const core::Gid& dgid, core::Pkey pkey);
  core::Gid source() const;
  core::Gid destination() const;
  bool operator==(const TableKey&) const = default;
};
// A GID word as memory holds it (network order), as the number it spells.
inline std::uint64_t gid_word_value(std::uint64_t word) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(word);
  return word;
}
// One multiply (it is on libibat's hot path): the destination's words and, rotated into the high
// half, the source's and the P_Key, times the 64-bit golden ratio. The GUIDs of one fabric differ
// in their low bits, which the product spreads over the bits home_slot() uses (32 and up).
inline std::uint64_t hash_key(const TableKey& key) {
  const std::uint64_t destination = gid_word_value(key.dgid[1] ^ key.dgid[0]);
  const std::uint64_t source = gid_word_value(key.sgid[1] ^ key.sgid[0]) ^ key.pkey;
  return (destination ^ std::rotl(source, 32)) * 0x9E3779B97F4A7C15ULL;
}
// The first slot of a key's probe window in a table of mask + 1 slots (mask + 1 <= kMaxSlots).
inline std::uint32_t home_slot(const TableKey& key, std::uint32_t mask) {
  return static_cast<std::uint32_t>(hash_key(key) >> 32) & mask;
}

// What a slot holds besides its key words: the path as libibat hands it out.
struct SlotPath {
  std::uint64_t fields[2];             // PathFields
  std::uint64_t record[kRecordWords];  // the wire PathRecord

  // The PathRecord the wire record holds (tests, the daemon's checks).
  core::PathRecord decode() const;
};
SlotPath make_slot_path(const core::PathRecord& path);

}  // namespace ibat::shm
