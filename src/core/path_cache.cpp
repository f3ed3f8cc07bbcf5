// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathCache (see path_cache.h).
#include "core/path_cache.h"

#include <cstring>

namespace ibat::core {

std::size_t hash_value(const PathKey& key) {
  std::uint64_t s0, s1, d0, d1;
  std::memcpy(&s0, key.sgid.raw.data(), 8);
  std::memcpy(&s1, key.sgid.raw.data() + 8, 8);
  std::memcpy(&d0, key.dgid.raw.data(), 8);
  std::memcpy(&d1, key.dgid.raw.data() + 8, 8);
  std::uint64_t h = d1 * 0x9E3779B97F4A7C15ULL;
  h ^= (d0 + key.pkey.value) * 0xC2B2AE3D27D4EB4FULL;
  h ^= (s1 ^ (s0 << 1)) * 0x165667B19E3779F9ULL;
  if (!key.qos.is_default()) h ^= (key.qos.service_id() ^ (std::uint64_t{key.qos.qos_class} << 48 | key.qos.fields)) * 0x94D049BB133111EBULL;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ULL;
  h ^= h >> 32;
  return static_cast<std::size_t>(h);
}

CompactPath CompactPath::pack(const PathRecord& p) {
  CompactPath c;
  c.flow_label = p.flow_label;
  c.dlid = p.dlid;
  c.slid = p.slid;
  c.hop_limit = p.hop_limit;
  c.tclass = p.tclass;
  c.numb_path_reversible = static_cast<std::uint8_t>((p.numb_path & 0x7F) | (p.reversible ? 0x80 : 0));
  c.sl_raw_traffic = static_cast<std::uint8_t>((p.sl & 0x7F) | (p.raw_traffic ? 0x80 : 0));
  c.mtu = static_cast<std::uint8_t>((p.mtu_selector << 6) | (p.mtu & 0x3F));
  c.rate = static_cast<std::uint8_t>((p.rate_selector << 6) | (p.rate & 0x3F));
  c.pkt_life = static_cast<std::uint8_t>((p.pkt_life_selector << 6) | (p.pkt_life & 0x3F));
  c.preference = p.preference;
  return c;
}

PathRecord CompactPath::unpack(const PathKey& key) const {
  PathRecord p;
  p.service_id = key.qos.service_id();
  p.dgid = key.dgid;
  p.sgid = key.sgid;
  p.pkey = key.pkey;
  p.dlid = dlid;
  p.slid = slid;
  p.raw_traffic = sl_raw_traffic & 0x80;
  p.flow_label = flow_label;
  p.hop_limit = hop_limit;
  p.tclass = tclass;
  p.reversible = numb_path_reversible & 0x80;
  p.numb_path = numb_path_reversible & 0x7F;
  p.qos_class = key.qos.qos_class;
  p.sl = sl_raw_traffic & 0x7F;
  p.mtu_selector = mtu >> 6;
  p.mtu = mtu & 0x3F;
  p.rate_selector = rate >> 6;
  p.rate = rate & 0x3F;
  p.pkt_life_selector = pkt_life >> 6;
  p.pkt_life = pkt_life & 0x3F;
  p.preference = preference;
  return p;
}

namespace {

std::size_t lid_key_hash(const Gid& sgid, Lid dlid, Pkey pkey) {
  std::uint64_t s1;
  std::memcpy(&s1, sgid.raw.data() + 8, 8);
  std::uint64_t h = (s1 ^ (std::uint64_t{dlid.value} << 16 | pkey.value)) * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  return static_cast<std::size_t>(h);
}

}  // namespace

std::size_t PathCache::key_hash(Index i) const { return hash_value(at(i).key); }

std::size_t PathCache::lid_hash(Index i) const {
  const CacheEntry& e = at(i);
  return lid_key_hash(e.key.sgid, e.path.dlid, e.key.pkey);
}

PathCache::Index PathCache::find(const PathKey& key) const {
  std::size_t mask = by_key_.slots.size() - 1;
  for (std::size_t s = hash_value(key) & mask;; s = (s + 1) & mask) {
    Index i = by_key_.slots[s];
    if (i == npos) return npos;
    if (at(i).key == key) return i;
  }
}

PathCache::Index PathCache::find_by_lid(const Gid& sgid, Lid dlid, Pkey pkey) const {
  std::size_t mask = by_lid_.slots.size() - 1;
  for (std::size_t s = lid_key_hash(sgid, dlid, pkey) & mask;; s = (s + 1) & mask) {
    Index i = by_lid_.slots[s];
    if (i == npos) return npos;
    const CacheEntry& e = at(i);
    if (e.path.dlid == dlid && e.key.sgid == sgid && e.key.pkey == pkey) return i;
  }
}

PathCache::Index PathCache::allocate() {
  if (free_ != npos) {
    Index i = free_;
    free_ = at(i).lru_next;
    return i;
  }
  if ((next_unused_ & kChunkMask) == 0) chunks_.push_back(std::make_unique<CacheEntry[]>(kChunkSize));
  return next_unused_++;
}

PathCache::Index PathCache::add_unlinked(const PathKey& key, TimePoint now, Owner owner) {
  Index i = allocate();
  CacheEntry& e = at(i);
  e = CacheEntry{};
  e.key = key;
  e.produced = now;
  e.used = now;
  e.owner = owner;
  count_owner(owner, true);
  ++size_;
  slot_insert(by_key_, i, &PathCache::key_hash);
  return i;
}

PathCache::Index PathCache::insert(const PathKey& key, TimePoint now, Owner owner) {
  Index i = add_unlinked(key, now, owner);
  link_front(i);
  return i;
}

PathCache::Index PathCache::insert_least_recent(const PathKey& key, TimePoint now, Owner owner) {
  Index i = add_unlinked(key, now, owner);
  link_back(i);
  return i;
}

void PathCache::erase(Index i) {
  count_owner(at(i).owner, false);
  unindex_lid(i);
  slot_erase(by_key_, i, &PathCache::key_hash);
  unlink(i);
  at(i).lru_next = free_;
  free_ = i;
  --size_;
}

// Only a destination's default path is found by its DLID (a resolve by LID names no ServiceID).
void PathCache::index_lid(Index i) {
  CacheEntry& e = at(i);
  if ((e.flags & CacheEntry::kLidIndexed) || !e.key.qos.is_default()) return;
  Index other = find_by_lid(e.key.sgid, e.path.dlid, e.key.pkey);
  if (other != npos) unindex_lid(other);
  slot_insert(by_lid_, i, &PathCache::lid_hash);
  e.flags |= CacheEntry::kLidIndexed;
}

void PathCache::unindex_lid(Index i) {
  CacheEntry& e = at(i);
  if (!(e.flags & CacheEntry::kLidIndexed)) return;
  slot_erase(by_lid_, i, &PathCache::lid_hash);
  e.flags &= static_cast<std::uint8_t>(~CacheEntry::kLidIndexed);
}

void PathCache::touch(Index i, TimePoint now, Owner owner) {
  CacheEntry& e = at(i);
  e.used = now;
  e.flags |= CacheEntry::kUsed;
  if (e.owner != owner) {
    count_owner(e.owner, false);
    count_owner(owner, true);
    e.owner = owner;
  }
  pass_over(i);
}

void PathCache::pass_over(Index i) {
  if (head_ == i) return;
  unlink(i);
  link_front(i);
}

PathCache::Index PathCache::lru_victim() const {
  for (Index i = tail_; i != npos; i = at(i).lru_prev)
    if (!at(i).pinned()) return i;
  return npos;
}

void PathCache::count_owner(Owner owner, bool added) {
  if (owner == kNoOwner) {
    added ? ++held_unowned_ : --held_unowned_;
    return;
  }
  if (added) {
    ++by_owner_[owner];
  } else if (auto it = by_owner_.find(owner); it != by_owner_.end() && --it->second == 0) {
    by_owner_.erase(it);
  }
}

std::uint32_t PathCache::held_by(Owner owner) const {
  if (owner == kNoOwner) return held_unowned_;
  auto it = by_owner_.find(owner);
  return it == by_owner_.end() ? 0 : it->second;
}

std::size_t PathCache::memory_bytes() const {
  return chunks_.size() * kChunkSize * sizeof(CacheEntry) +
         (by_key_.slots.capacity() + by_lid_.slots.capacity()) * sizeof(Index) +
         chunks_.capacity() * sizeof(chunks_[0]);
}

void PathCache::link_back(Index i) {
  CacheEntry& e = at(i);
  e.lru_next = npos;
  e.lru_prev = tail_;
  if (tail_ != npos) at(tail_).lru_next = i;
  tail_ = i;
  if (head_ == npos) head_ = i;
}

void PathCache::link_front(Index i) {
  CacheEntry& e = at(i);
  e.lru_prev = npos;
  e.lru_next = head_;
  if (head_ != npos) at(head_).lru_prev = i;
  head_ = i;
  if (tail_ == npos) tail_ = i;
}

void PathCache::unlink(Index i) {
  CacheEntry& e = at(i);
  if (e.lru_prev != npos) at(e.lru_prev).lru_next = e.lru_next; else head_ = e.lru_next;
  if (e.lru_next != npos) at(e.lru_next).lru_prev = e.lru_prev; else tail_ = e.lru_prev;
}

void PathCache::slot_insert(SlotTable& t, Index i, HashOf hash) {
  if ((t.count + 1) * 4 > t.slots.size() * 3) {  // keep the load factor <= 3/4
    std::vector<Index> old(t.slots.size() * 2, npos);
    old.swap(t.slots);
    t.count = 0;
    for (Index j : old)
      if (j != npos) slot_insert(t, j, hash);
  }
  std::size_t mask = t.slots.size() - 1;
  std::size_t s = (this->*hash)(i) & mask;
  while (t.slots[s] != npos) s = (s + 1) & mask;
  t.slots[s] = i;
  ++t.count;
}

// Backward-shift deletion keeps linear probing free of tombstones.
void PathCache::slot_erase(SlotTable& t, Index i, HashOf hash) {
  std::size_t mask = t.slots.size() - 1;
  std::size_t s = (this->*hash)(i) & mask;
  while (t.slots[s] != i) s = (s + 1) & mask;
  std::size_t hole = s;
  for (std::size_t j = (hole + 1) & mask; t.slots[j] != npos; j = (j + 1) & mask) {
    std::size_t home = (this->*hash)(t.slots[j]) & mask;
    // Move slots[j] into the hole unless its home lies cyclically within (hole, j].
    bool home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_in_range) {
      t.slots[hole] = t.slots[j];
      hole = j;
    }
  }
  t.slots[hole] = npos;
  --t.count;
}

}  // namespace ibat::core
