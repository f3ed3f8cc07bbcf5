// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the warm-cache snapshot decoder: any bytes must give either entries that are all
// servable stale paths, or an error and no entries; never a crash or an unbounded allocation.
#include <cstdlib>

#include "server/daemon/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ibat;
  auto now = server::WallTime{} + std::chrono::hours(24 * 365 * 50);
  server::SnapshotContents contents = server::decode_snapshot(std::span(data, size), now, 1000);
  if (!contents.ok() && !contents.entries.empty()) std::abort();
  for (const auto& e : contents.entries) {
    if (e.state != core::EntryState::stale || !e.path.is_servable()) std::abort();
  }
  return 0;
}
