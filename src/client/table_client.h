// The libibat side of the shared path table (docs/shared-table.md): maps the daemon's table
// read-only when it is there and trustworthy, and answers GID resolves that hit a valid entry
// exactly as the daemon would (state valid, age since the SA answer). Everything else, and any
// doubt, is left to the socket. It counts its hits and the distinct slots they came from, which
// the handle reports to the daemon in TABLE_HITS batches (docs/protocol.md).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "client/include/ibat.h"
#include "protocol/messages.h"
#include "shm/table_file.h"

namespace ibat::client {

class TableClient {
 public:
  // The table of the daemon at `socket` connected on `fd` (its owner must be the daemon's uid);
  // nullptr when absent, foreign, corrupt, or disabled by IBAT_SHARED_TABLE=0.
  static std::unique_ptr<TableClient> open(const std::string& socket, int fd);

  // Fills `out` and returns true on a hit; false: ask the daemon.
  bool resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out);

  // Hits wait for a report; due: enough of them that it should go now.
  bool has_report() const { return hits_ != 0; }
  bool report_due() const { return hits_ >= kReportEvery || slots_.size() >= kReportSlots; }
  // The hits since the last report (then forgotten).
  protocol::TableHits take_report();

  static constexpr std::uint64_t kReportEvery = 1 << 16;
  static constexpr std::size_t kReportSlots = 1024;

 private:
  explicit TableClient(shm::MappedTable table)
      : table_(std::move(table)), seen_((table_.reader.slot_count() + 63) / 64, 0) {}
  // Counts a hit (inline: it runs on every one; a slot not seen since the last report is rare).
  void record(const shm::TableHit& hit) {
    ++hits_;
    if (hit.generation != generation_) [[unlikely]] return first_hit(hit);
    const std::uint64_t bit = 1ULL << (hit.slot % 64);
    if ((seen_[hit.slot / 64] & bit) == 0) [[unlikely]] first_hit(hit);
  }
  // A hit in a slot not yet in slots_ (or of a new generation).
  [[gnu::noinline]] void first_hit(const shm::TableHit& hit);

  shm::MappedTable table_;
  shm::KeyDefaults defaults_;           // of the generation resolve() last saw
  std::uint64_t hits_ = 0;
  std::uint64_t generation_ = 0;        // of the slots below
  std::vector<std::uint32_t> slots_;    // distinct slots hit since the last report
  std::vector<std::uint64_t> seen_;     // bitmap of slots_
};

}  // namespace ibat::client
