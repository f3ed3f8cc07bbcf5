// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathCache: compact store of path entries keyed by (local GID, DGID, P_Key).
// Entries live in fixed-size chunks (stable indices, no per-entry allocation), are found through
// open-addressing hash indexes of 32-bit slots (by key, and by (local GID, DLID, P_Key) for
// resolve-by-LID), and are linked in an LRU list. About 140 bytes per entry including both
// indexes, as measured by bench/ (docs/performance.md). Each entry names its owner, who used it
// last, and the cache counts each owner's entries. Policy (what to evict, states) is the Resolver's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/qos_key.h"
#include "core/resolve_types.h"
#include "core/types.h"

namespace ibat::core {

struct PathKey {
  Gid sgid;
  Gid dgid;
  Pkey pkey;
  QosKey qos;  // a ServiceID / QoS class the SM's policy may single out; default: none
  bool operator==(const PathKey&) const = default;
};
std::size_t hash_value(const PathKey& key);

// The PathRecord fields not already in the key, packed (16 bytes instead of 72). The ServiceID
// and QoS class are the key's: what was asked (OpenSM echoes neither).
struct CompactPath {
  std::uint32_t flow_label = 0;
  Lid dlid;
  Lid slid;
  std::uint8_t hop_limit = 0;
  std::uint8_t tclass = 0;
  std::uint8_t numb_path_reversible = 0;  // bit 7: reversible
  std::uint8_t sl_raw_traffic = 0;        // bit 7: raw_traffic
  std::uint8_t mtu = 0;                   // selector << 6 | code
  std::uint8_t rate = 0;
  std::uint8_t pkt_life = 0;
  std::uint8_t preference = 0;

  static CompactPath pack(const PathRecord& path);
  PathRecord unpack(const PathKey& key) const;
};

// Who used an entry last: a local uid, or kNoOwner (the kernel's requests, the daemon's own: a
// table, a snapshot, a neighbour).
using Owner = std::uint32_t;
constexpr Owner kNoOwner = UINT32_MAX;  // (uid_t)-1 is no user's uid
inline Owner owner_of(const std::optional<std::uint32_t>& requester) { return requester.value_or(kNoOwner); }

struct CacheEntry {
  static constexpr std::uint8_t kPinned = 1;     // a query job exists: never evicted
  static constexpr std::uint8_t kScheduled = 2;  // waiting in the revalidation schedule
  static constexpr std::uint8_t kLidIndexed = 4; // findable by its path's DLID
  static constexpr std::uint8_t kUsed = 8;       // a request used it (touch): not only a table's or snapshot's

  TimePoint produced{};     // when the SA (or ARP) produced the path
  TimePoint used{};         // last served or requested (kUsed); else when it was inserted
  TimePoint retry_after{};  // failed: end of negative caching; stale: earliest next revalidation
  PathKey key;
  CompactPath path;
  std::uint32_t lru_prev = 0;
  std::uint32_t lru_next = 0;  // also the free-list link of unused slots
  EntryState state = EntryState::resolving;
  Error last_error = Error::ok;
  std::uint8_t flags = 0;
  PathOrigin origin = PathOrigin::unknown;  // what stored `path` (at `produced`); in the padding
  Owner owner = kNoOwner;  // in the padding: the entry stays 104 bytes

  bool has_path() const {
    return state == EntryState::valid || state == EntryState::stale || state == EntryState::provisional;
  }
  bool pinned() const { return flags & kPinned; }
};

class PathCache {
 public:
  using Index = std::uint32_t;
  static constexpr Index npos = UINT32_MAX;

  Index find(const PathKey& key) const;
  CacheEntry& at(Index i) { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  const CacheEntry& at(Index i) const { return chunks_[i >> kChunkBits][i & kChunkMask]; }

  // The entry indexed under (sgid, dlid, pkey), or npos.
  Index find_by_lid(const Gid& sgid, Lid dlid, Pkey pkey) const;

  // Inserts a new entry (state resolving) of `owner` at the most recently used end. Key must be absent.
  Index insert(const PathKey& key, TimePoint now, Owner owner = kNoOwner);
  // The same at the least recently used end: an entry nobody asked for yet (prefetch).
  Index insert_least_recent(const PathKey& key, TimePoint now, Owner owner = kNoOwner);
  void erase(Index i);
  // Indexes the entry under its path's DLID, replacing any other entry indexed there. The path's
  // DLID must not change while indexed: unindex first.
  void index_lid(Index i);
  void unindex_lid(Index i);
  // Marks the entry used now by `owner` (its owner from now on) and moves it to the most recently
  // used end.
  void touch(Index i, TimePoint now, Owner owner = kNoOwner);
  // Moves the entry to the most recently used end without marking it used: an eviction passed it over.
  void pass_over(Index i);
  // Least recently used entry that is not pinned, or npos.
  Index lru_victim() const;
  // Entries `owner` holds; owners holding any.
  std::uint32_t held_by(Owner owner) const;
  std::size_t owners() const { return by_owner_.size() + (held_unowned_ > 0 ? 1 : 0); }

  std::size_t size() const { return size_; }
  // Bytes held by the entry chunks and the hash index.
  std::size_t memory_bytes() const;

  // Slots are numbered [0, slot_count()); holds(i): slot i has an entry. Indices are stable, so a
  // walk by index can pause and resume (entries inserted meanwhile may or may not be seen).
  Index slot_count() const { return next_unused_; }
  bool holds(Index i) const { return i < next_unused_ && find(at(i).key) == i; }

  // Calls fn(Index) for every entry, most recently used first. fn must not insert or erase.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (Index i = head_; i != npos; i = at(i).lru_next) fn(i);
  }

 private:
  static constexpr unsigned kChunkBits = 8;  // 256 entries: little slack in small caches
  static constexpr Index kChunkSize = Index{1} << kChunkBits;
  static constexpr Index kChunkMask = kChunkSize - 1;

  // Open addressing with linear probing over entry indices; npos = empty. The hash of a slot is
  // recomputed from its entry, so a slot costs 4 bytes.
  struct SlotTable {
    std::vector<Index> slots = std::vector<Index>(16, npos);
    std::size_t count = 0;
  };
  using HashOf = std::size_t (PathCache::*)(Index) const;
  std::size_t key_hash(Index i) const;
  std::size_t lid_hash(Index i) const;
  void slot_insert(SlotTable& t, Index i, HashOf hash);
  void slot_erase(SlotTable& t, Index i, HashOf hash);

  Index allocate();
  Index add_unlinked(const PathKey& key, TimePoint now, Owner owner);  // a new entry in the key index, not yet in the LRU list
  void link_front(Index i);
  void link_back(Index i);
  void unlink(Index i);
  void count_owner(Owner owner, bool added);

  // Entries per owner; kNoOwner's apart (every entry of a table or a kernel-only host: no hashing).
  std::unordered_map<Owner, std::uint32_t> by_owner_;
  std::uint32_t held_unowned_ = 0;

  std::vector<std::unique_ptr<CacheEntry[]>> chunks_;
  SlotTable by_key_;
  SlotTable by_lid_;
  std::size_t size_ = 0;
  Index next_unused_ = 0;     // first never-used slot
  Index free_ = npos;         // list of released slots
  Index head_ = npos;         // most recently used
  Index tail_ = npos;         // least recently used
};

}  // namespace ibat::core
