// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The libibat side of the shared path table (docs/shared-table.md): maps the daemon's table
// read-only when it is there and trustworthy, and answers GID resolves that hit a valid entry
// exactly as the daemon would (state valid, age since the SA answer). Everything else, and any
// doubt, is left to the socket. When the daemon grows the table (a larger file at the same path,
// the old one marked moved and emptied), the next resolve that sees the old table's new generation
// maps the path again. It counts its hits and the distinct slots they came from, which
// the handle reports to the daemon in TABLE_HITS batches (docs/protocol.md).
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/include/ibat.h"
#include "protocol/messages.h"
#include "shm/table_file.h"

namespace ibat::client {

namespace detail {
// The coarse clock (a tick's resolution, a few ms; a quarter of the cost) is enough for a ms age.
inline std::uint64_t monotonic_coarse_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}
}  // namespace detail

class TableClient {
 public:
  // The table of the daemon at `socket` connected on `fd` (its owner must be the daemon's uid);
  // nullptr when absent, foreign, corrupt, or disabled by IBAT_SHARED_TABLE=0.
  static std::unique_ptr<TableClient> open(const std::string& socket, int fd);

  // Fills `out` and returns true on a hit; false: ask the daemon (`out` is then untouched). Inline:
  // it is the whole of a table hit.
  [[gnu::always_inline]] bool resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out);
  // The same for targets[0..n) (ibat_resolve_table): hit[i] 1 and out[i] filled for a hit, hit[i]
  // 0 and out[i] untouched otherwise; one table generation and one clock read for the batch.
  // Returns the hits.
  std::size_t resolve_batch(const ibat_target* targets, std::size_t n, const ibat_resolve_opts* opts, ibat_path* out,
                            unsigned char* hit);

  // Hits wait for a report; due: enough of them that it should go now.
  bool has_report() const { return hits_ != 0; }
  bool report_due() const { return hits_ >= kReportEvery || slots_.size() >= kReportSlots; }
  // The hits since the last report (then forgotten).
  protocol::TableHits take_report();

  static constexpr std::uint64_t kReportEvery = 1 << 16;
  static constexpr std::size_t kReportSlots = 1024;

 private:
  TableClient(shm::MappedTable table, std::string path, uid_t owner)
      : table_(std::move(table)), seen_(seen_words(table_), 0), path_(std::move(path)), owner_(owner) {}
  static std::size_t seen_words(const shm::MappedTable& table) { return (table.reader.slot_count() + 63) / 64; }
  // The table at path_ that is not marked moved, if it can be mapped (a growth may happen meanwhile).
  static std::optional<shm::MappedTable> map_current(const std::string& path, uid_t owner);
  // The mapped table was replaced by a larger one: map that (else keep the old, now empty one).
  [[gnu::noinline]] void follow_move();
  // Counts a hit (inline: it runs on every one; a slot not seen since the last report is rare).
  void record(const shm::TableHit& hit) {
    ++hits_;
    if (hit.generation != generation_) [[unlikely]] return first_hit(hit);
    const std::uint64_t bit = 1ULL << (hit.slot % 64);
    if ((seen_[hit.slot / 64] & bit) == 0) [[unlikely]] first_hit(hit);
  }
  // A hit in a slot not yet in slots_ (or of a new generation).
  [[gnu::noinline]] void first_hit(const shm::TableHit& hit);
  // Flags the table can answer for: SGID, P_Key, CACHE_ONLY (not FORCE_SA, no unknown bits).
  static bool answerable(std::uint32_t flags) {
    return (flags & ~std::uint32_t{IBAT_RESOLVE_SGID | IBAT_RESOLVE_PKEY | IBAT_RESOLVE_CACHE_ONLY}) == 0;
  }
  // The table generation now, with defaults_ brought up to it.
  std::uint64_t current_generation();
  // One target against `generation`; `now_ms()` is called only on a hit.
  template <typename NowMs>
  [[gnu::always_inline]] bool hit_one(const ibat_target& target, const ibat_resolve_opts* opts, std::uint32_t flags,
                                      std::uint64_t generation, ibat_path& out, NowMs now_ms);

  shm::MappedTable table_;
  shm::KeyDefaults defaults_;           // of the generation resolve() last saw
  std::uint64_t hits_ = 0;
  std::uint64_t generation_ = 0;        // of the slots below
  std::vector<std::uint32_t> slots_;    // distinct slots hit since the last report
  std::vector<std::uint64_t> seen_;     // bitmap of slots_
  // Only follow_move() reads these: after the members every hit uses.
  std::string path_;                    // the table's file
  uid_t owner_;                         // the daemon's uid, which must own it
};

// A slot's PathFields are ibat_path's dlid .. flow_label as they are, and its record the wire bytes.
static_assert(offsetof(ibat_path, slid) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, slid));
static_assert(offsetof(ibat_path, pkey) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, pkey));
static_assert(offsetof(ibat_path, sl) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, sl));
static_assert(offsetof(ibat_path, mtu) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, mtu));
static_assert(offsetof(ibat_path, rate) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, rate));
static_assert(offsetof(ibat_path, pkt_life) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, pkt_life));
static_assert(offsetof(ibat_path, hop_limit) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, hop_limit));
static_assert(offsetof(ibat_path, tclass) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, tclass));
static_assert(offsetof(ibat_path, flow_label) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, flow_label));
static_assert(offsetof(ibat_path, state) - offsetof(ibat_path, dlid) == sizeof(shm::PathFields));
static_assert(sizeof(ibat_path::record) == shm::kRecordBytes);

inline std::uint64_t TableClient::current_generation() {
  std::uint64_t generation = table_.reader.generation();
  if (generation != defaults_.generation) [[unlikely]] {
    if (table_.reader.moved()) {
      follow_move();
      generation = table_.reader.generation();
    }
    defaults_ = table_.reader.defaults();
  }
  return generation;
}

inline bool TableClient::resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out) {
  const std::uint32_t flags = opts ? opts->flags : 0;
  if (!answerable(flags)) return false;
  return hit_one(target, opts, flags, current_generation(), out, [] { return detail::monotonic_coarse_ms(); });
}

inline std::size_t TableClient::resolve_batch(const ibat_target* targets, std::size_t n, const ibat_resolve_opts* opts,
                                              ibat_path* out, unsigned char* hit) {
  const std::uint32_t flags = opts ? opts->flags : 0;
  if (!answerable(flags)) {
    std::memset(hit, 0, n);
    return 0;
  }
  const std::uint64_t generation = current_generation();
  const std::uint64_t now = detail::monotonic_coarse_ms();
  auto now_ms = [now] { return now; };
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    hit[i] = hit_one(targets[i], opts, flags, generation, out[i], now_ms) ? 1 : 0;
    hits += hit[i];
  }
  return hits;
}

template <typename NowMs>
inline bool TableClient::hit_one(const ibat_target& target, const ibat_resolve_opts* opts, std::uint32_t flags,
                                 std::uint64_t generation, ibat_path& out, NowMs now_ms) {
  if (target.type != IBAT_TARGET_GID) return false;
  const shm::TableKey key =
      shm::PathTableReader::key_for(defaults_, target.u.gid.raw, (flags & IBAT_RESOLVE_SGID) ? opts->sgid.raw : nullptr,
                                    (flags & IBAT_RESOLVE_PKEY) ? &opts->pkey : nullptr);
  shm::TableHit hit;
  if (!table_.reader.lookup(key, generation, hit)) [[unlikely]] return false;
  record(hit);
  const std::uint64_t now = now_ms();
  const std::uint64_t age = now > hit.produced_ms ? now - hit.produced_ms : 0;
  std::memcpy(out.dgid.raw, key.dgid, 16);  // the record's GIDs are the key's (the lookup compared them)
  std::memcpy(out.sgid.raw, key.sgid, 16);
  std::memcpy(reinterpret_cast<unsigned char*>(&out) + offsetof(ibat_path, dlid), hit.path.fields,
              sizeof(shm::PathFields));
  out.state = IBAT_STATE_VALID;
  out.age_ms = static_cast<std::uint32_t>(age < UINT32_MAX ? age : UINT32_MAX);
  std::memcpy(out.record, hit.path.record, sizeof out.record);
  return true;
}

}  // namespace ibat::client
