// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathTableWriter (see path_table_writer.h). Slot update protocol: seq becomes odd (relaxed), every
// data word is stored with release, seq becomes even (release). A reader that saw any new word
// therefore sees the odd or the new seq afterwards and drops what it read (path_table_reader.cpp).
#include "shm/path_table_writer.h"

#include <cstring>
#include <new>
#include <stdexcept>

namespace ibat::shm {

namespace {
constexpr auto kRelease = std::memory_order_release;
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

PathTableWriter::PathTableWriter(void* memory, std::uint32_t slot_count)
    : header_(static_cast<TableHeader*>(memory)),
      slots_(reinterpret_cast<TableSlot*>(static_cast<std::byte*>(memory) + sizeof(TableHeader))),
      mask_(slot_count - 1),
      live_(slot_count, false),
      keys_(slot_count) {
  if (slot_count < kMinSlots || slot_count > kMaxSlots || (slot_count & mask_) != 0)
    throw std::invalid_argument("path table: slot count must be a power of two in [16, 2^24]");
  std::memset(memory, 0, table_bytes(slot_count));
  header_ = new (memory) TableHeader{};
  header_->magic = kMagic;
  header_->version = kVersion;
  header_->header_size = sizeof(TableHeader);
  header_->slot_size = sizeof(TableSlot);
  header_->slot_count = slot_count;
  header_->generation.store(generation_, kRelease);
  header_->default_pkey.store(0xFFFF, kRelease);
  for (std::uint32_t i = 0; i < slot_count; ++i) new (&slots_[i]) TableSlot{};
}

void PathTableWriter::write_slot(std::uint32_t slot, const TableKey& key, const SlotPath& path,
                                 std::uint64_t produced_ms) {
  TableSlot& s = slots_[slot];
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
  live_[slot] = false;
}

bool PathTableWriter::publish(const TableKey& key, const core::PathRecord& path, std::uint64_t produced_ms) {
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
  if (auto it = index_.find(key); it != index_.end()) {
    write_slot(it->second, key, packed, produced_ms);
    return true;
  }
  std::uint32_t slot = home_slot(key, mask_);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, slot = (slot + 1) & mask_) {
    if (live_[slot]) continue;
    write_slot(slot, key, packed, produced_ms);
    live_[slot] = true;
    keys_[slot] = key;
    index_.emplace(key, slot);
    return true;
  }
  return false;
}

bool PathTableWriter::remove(const TableKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  kill_slot(it->second);
  index_.erase(it);
  return true;
}

void PathTableWriter::clear() {
  ++generation_;
  header_->generation.store(generation_, kRelease);
  live_.assign(live_.size(), false);
  index_.clear();
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

std::optional<TableKey> PathTableWriter::key_at(std::uint32_t slot, std::uint64_t generation) const {
  if (generation != generation_ || slot > mask_ || !live_[slot]) return std::nullopt;
  return keys_[slot];
}

}  // namespace ibat::shm
