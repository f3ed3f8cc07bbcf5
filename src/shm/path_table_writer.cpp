// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableWriter (see path_table_writer.h). Slot update protocol: seq becomes odd (relaxed), every
// data word is stored with release, seq becomes even (release). A reader that saw any new word
// therefore sees the odd or the new seq afterwards and drops what it read (path_table_reader.cpp).
#include "shm/path_table_writer.h"

#include <new>
#include <stdexcept>

namespace ibat::shm {

namespace {
constexpr auto kRelease = std::memory_order_release;
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

PathTableWriter::PathTableWriter(void* memory, std::uint32_t slot_count, std::uint64_t generation)
    : header_(static_cast<TableHeader*>(memory)),
      slots_(reinterpret_cast<TableSlot*>(static_cast<std::byte*>(memory) + sizeof(TableHeader))),
      mask_(slot_count - 1),
      generation_(generation) {
  if (slot_count < kMinSlots || slot_count > kMaxSlots || (slot_count & mask_) != 0)
    throw std::invalid_argument("path table: slot count must be a power of two in [16, 2^24]");
  if (generation == 0) throw std::invalid_argument("path table: generation 0 means none");
  // The slots stay as they are: zeroed words are an empty slot (seq 0, generation 0, not live).
  header_ = new (memory) TableHeader{};
  header_->magic = kMagic;
  header_->version = kVersion;
  header_->header_size = sizeof(TableHeader);
  header_->slot_size = sizeof(TableSlot);
  header_->slot_count = slot_count;
  header_->generation.store(generation_, kRelease);
  header_->default_pkey.store(0xFFFF, kRelease);
}

bool PathTableWriter::live(std::uint32_t slot) const {
  const TableSlot& s = slots_[slot];
  return s.generation.load(kRelaxed) == generation_ && (s.key_bits.load(kRelaxed) & kSlotLive) != 0;
}

void PathTableWriter::write_slot(std::uint32_t slot, const TableKey& key, const SlotPath& path,
                                 std::uint64_t produced_ms, std::uint64_t expiry) {
  TableSlot& s = slots_[slot];
  s.expiry = expiry;  // readers never read it
  const std::uint64_t seq = s.seq.load(kRelaxed);
  s.seq.store(seq + 1, kRelaxed);
  s.generation.store(generation_, kRelease);
  s.key_bits.store(key.pkey | kSlotLive, kRelease);
  for (int w = 0; w < 2; ++w) s.fields[w].store(path.fields[w], kRelease);
  for (int w = 0; w < kRecordWords; ++w) s.record[w].store(path.record[w], kRelease);
  s.produced_ms.store(produced_ms, kRelease);
  s.seq.store(seq + 2, kRelease);
}

void PathTableWriter::kill_slot(std::uint32_t slot) {
  TableSlot& s = slots_[slot];
  const std::uint64_t seq = s.seq.load(kRelaxed);
  s.seq.store(seq + 1, kRelaxed);
  s.key_bits.store(0, kRelease);
  s.seq.store(seq + 2, kRelease);
  --size_;
}

TableKey PathTableWriter::key_in(std::uint32_t slot) const {
  const TableSlot& s = slots_[slot];
  TableKey key{};
  key.sgid[0] = s.record[kRecordSgidWord].load(kRelaxed);
  key.sgid[1] = s.record[kRecordSgidWord + 1].load(kRelaxed);
  key.dgid[0] = s.record[kRecordDgidWord].load(kRelaxed);
  key.dgid[1] = s.record[kRecordDgidWord + 1].load(kRelaxed);
  key.pkey = static_cast<std::uint16_t>(s.key_bits.load(kRelaxed));
  return key;
}

std::optional<std::uint32_t> PathTableWriter::find(const TableKey& key) const {
  std::uint32_t slot = home_slot(key, mask_);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, slot = (slot + 1) & mask_)
    if (live(slot) && key_in(slot) == key) return slot;
  return std::nullopt;
}

std::optional<std::uint32_t> PathTableWriter::free_slot(const TableKey& key) const {
  std::uint32_t slot = home_slot(key, mask_);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, slot = (slot + 1) & mask_)
    if (!live(slot)) return slot;
  return std::nullopt;
}

bool PathTableWriter::insert(const TableKey& key, const SlotPath& path, std::uint64_t produced_ms,
                             std::uint64_t expiry) {
  const std::optional<std::uint32_t> slot = free_slot(key);
  if (!slot) return false;
  write_slot(*slot, key, path, produced_ms, expiry);
  ++size_;
  return true;
}

bool PathTableWriter::publish(const TableKey& key, const core::PathRecord& path, std::uint64_t produced_ms,
                              std::uint64_t expiry) {
  // What is served is the path under its key's GIDs and P_Key, as the Resolver answers it; readers
  // match the key against the record's GIDs.
  core::PathRecord keyed = path;
  keyed.sgid = key.source();
  keyed.dgid = key.destination();
  keyed.pkey.value = key.pkey;
  if (!keyed.is_servable()) {
    remove(key);
    return false;
  }
  const SlotPath packed = make_slot_path(keyed);
  if (const std::optional<std::uint32_t> slot = find(key)) {
    write_slot(*slot, key, packed, produced_ms, expiry);
    return true;
  }
  return insert(key, packed, produced_ms, expiry);
}

bool PathTableWriter::remove(const TableKey& key) {
  const std::optional<std::uint32_t> slot = find(key);
  if (!slot) return false;
  kill_slot(*slot);
  return true;
}

bool PathTableWriter::remove_if_expiry(std::uint32_t slot, std::uint64_t expiry) {
  if (expiry_in(slot) != expiry) return false;
  kill_slot(slot);
  return true;
}

std::optional<std::uint64_t> PathTableWriter::expiry_in(std::uint32_t slot) const {
  if (slot > mask_ || !live(slot)) return std::nullopt;
  return slots_[slot].expiry;
}

void PathTableWriter::clear() {
  ++generation_;
  header_->generation.store(generation_, kRelease);
  size_ = 0;
}

void PathTableWriter::set_defaults(const core::Gid& local_gid, core::Pkey default_pkey) {
  const TableKey k = TableKey::of(local_gid, core::Gid{}, default_pkey);
  if (header_->local_gid[0].load(kRelaxed) == k.sgid[0] && header_->local_gid[1].load(kRelaxed) == k.sgid[1] &&
      header_->default_pkey.load(kRelaxed) == default_pkey.value)
    return;
  header_->local_gid[0].store(k.sgid[0], kRelease);
  header_->local_gid[1].store(k.sgid[1], kRelease);
  header_->default_pkey.store(default_pkey.value, kRelease);
  clear();  // readers keep the defaults for as long as the generation stays the same
}

bool PathTableWriter::wants_larger_table_for(const TableKey& key) const {
  if (contains(key)) return false;
  return (size() + 1) * kSlotsPerKey > slot_count() || !free_slot(key);
}

void PathTableWriter::copy_into(PathTableWriter& other) const {
  for (int w = 0; w < 2; ++w) other.header_->local_gid[w].store(header_->local_gid[w].load(kRelaxed), kRelease);
  other.header_->default_pkey.store(header_->default_pkey.load(kRelaxed), kRelease);
  for (std::uint32_t slot = 0; slot <= mask_; ++slot) {
    if (!live(slot)) continue;
    const TableSlot& s = slots_[slot];
    SlotPath path;
    for (int w = 0; w < 2; ++w) path.fields[w] = s.fields[w].load(kRelaxed);
    for (int w = 0; w < kRecordWords; ++w) path.record[w] = s.record[w].load(kRelaxed);
    other.insert(key_in(slot), path, s.produced_ms.load(kRelaxed), s.expiry);
  }
}

void PathTableWriter::mark_moved() {
  header_->moved.store(1, kRelease);
  clear();
}

std::optional<TableKey> PathTableWriter::key_at(std::uint32_t slot, std::uint64_t generation) const {
  if (generation != generation_ || slot > mask_ || !live(slot)) return std::nullopt;
  return key_in(slot);
}

}  // namespace ibat::shm
