// PathTableReader (see path_table_reader.h). Slot read protocol: seq (acquire), the data words
// (acquire), seq again; the read counts only if both seq loads are equal and even. The header
// fields are read once, at open(); only the generation word changes afterwards.
#include "shm/path_table_reader.h"

#include <cstddef>
#include <cstring>

namespace ibat::shm {

namespace {
constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

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

namespace {

std::uint16_t be16_at(const std::uint64_t (&record)[kRecordWords], std::size_t offset) {
  std::uint8_t b[2];
  std::memcpy(b, reinterpret_cast<const std::uint8_t*>(record) + offset, 2);
  return static_cast<std::uint16_t>(b[0] << 8 | b[1]);
}

// What the reader vouches for beyond the key match: a unicast DLID, the same in both views.
bool plausible(const SlotPath& path, const TableKey& key) {
  PathFields f;
  std::memcpy(&f, path.fields, sizeof f);
  const std::uint16_t dlid = be16_at(path.record, kRecordDlidOffset);
  return f.dlid == dlid && core::Lid{dlid}.is_valid_unicast() && f.pkey == key.pkey &&
         be16_at(path.record, kRecordPkeyOffset) == key.pkey;
}

}  // namespace

bool PathTableReader::lookup(const TableKey& key, TableHit& hit) const {
  const std::uint64_t generation = header_->generation.load(kAcquire);
  std::uint32_t slot = static_cast<std::uint32_t>(hash_key(key)) & mask_;
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, slot = (slot + 1) & mask_) {
    const TableSlot& s = slots_[slot];
    const std::uint64_t seq = s.seq.load(kAcquire);
    const std::uint64_t slot_generation = s.generation.load(kAcquire);
    // The key first, word by word (the record's GIDs): another key, the usual case when probing,
    // needs no more loads. A torn read can only make a wrong key look right; the seq check catches it.
    const bool same_key = s.record[kRecordDgidWord + 1].load(kAcquire) == key.dgid[1] &&
                          s.record[kRecordDgidWord].load(kAcquire) == key.dgid[0] &&
                          s.record[kRecordSgidWord + 1].load(kAcquire) == key.sgid[1] &&
                          s.record[kRecordSgidWord].load(kAcquire) == key.sgid[0] &&
                          s.key_bits.load(kAcquire) == (key.pkey | kSlotLive);
    if (!same_key) {
      if (slot_generation != generation && (seq & 1) == 0 && s.seq.load(kRelaxed) == seq)
        return false;  // unused in this generation: the end of the probe chain
      continue;
    }
    for (int w = 0; w < 2; ++w) hit.path.fields[w] = s.fields[w].load(kAcquire);
    for (int w = 0; w < kRecordWords; ++w) hit.path.record[w] = s.record[w].load(kAcquire);
    hit.produced_ms = s.produced_ms.load(kAcquire);
    if ((seq & 1) != 0 || s.seq.load(kRelaxed) != seq) continue;  // torn: treat as not this key
    if (slot_generation != generation) return false;             // unused in this generation: end
    if (!plausible(hit.path, key)) return false;
    if (header_->generation.load(kAcquire) != generation) return false;  // invalidated meanwhile
    hit.slot = slot;
    hit.generation = generation;
    return true;
  }
  return false;
}

}  // namespace ibat::shm
