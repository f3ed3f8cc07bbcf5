// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NeighbourMirror: ibatd's copy of the kernel's neighbour table, fed by rtnetlink events and dumps
// (neighbour_monitor.h). IPoIB entries become the Resolver's neighbour updates and removals, each
// with the HCA port its interface runs on when sysfs tells (ipoib_port.h); other link layers are
// kept only to be counted. A dump marks what it saw, and at its end every entry it
// did not see is removed: after the socket overran (ENOBUFS) a re-dump restores the exact table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "core/types.h"
#include "kernel/ipoib_port.h"
#include "kernel/neighbour_message.h"

namespace ibat::kernel {

struct NeighbourMirrorStats {
  std::uint64_t ipoib = 0;           // gauge: IPoIB neighbours known
  std::uint64_t other = 0;           // gauge: neighbours on other link layers (ignored)
  std::uint64_t updates = 0;         // IPoIB updates passed on
  std::uint64_t removals = 0;        // IPoIB removals passed on
  std::uint64_t ignored_non_ipoib = 0;  // messages about other link layers
  std::uint64_t dumps = 0;           // full dumps applied (the first one and every re-dump)
};

// What the monitor knows of the interface a message is about.
struct NeighbourLink {
  bool ipoib = false;              // ARPHRD_INFINIBAND
  std::optional<IpoibPort> port;   // its HCA port, when sysfs says
};

class NeighbourMirror {
 public:
  struct Sink {
    std::function<void(const core::IpAddr&, const core::HwAddr&, const std::optional<IpoibPort>&)> update;
    std::function<void(const core::IpAddr&, const std::optional<IpoibPort>&)> remove;
  };
  explicit NeighbourMirror(Sink sink) : sink_(std::move(sink)) {}

  // One message of an event or of a dump, about an interface `link`.
  void apply(const NeighbourMessage& message, const NeighbourLink& link);
  void begin_dump();
  void end_dump();

  NeighbourMirrorStats stats() const;

 private:
  struct Entry {
    bool ipoib = false;
    core::HwAddr hw;
    std::optional<IpoibPort> port;
    bool seen = true;
  };
  using Key = std::pair<int, core::IpAddr>;
  void erase(std::map<Key, Entry>::iterator it);

  Sink sink_;
  std::map<Key, Entry> table_;
  NeighbourMirrorStats counters_;
};

}  // namespace ibat::kernel
