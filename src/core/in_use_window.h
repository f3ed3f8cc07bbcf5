// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The subnet's window for renewing paths in use after a LID move (docs/design.md §3 item 8):
// when the SM moved the LIDs, every host renews by GET the paths it used in the last minute,
// ahead of the GetTables that renew the rest, since the SA serves one FIFO queue and a GET behind
// every host's table would wait for all of them. No host sees the others' renewals, so the window
// is sized from its own: n hosts x its own paths in use, each GET costing the SA kGetCostPaths
// paths of a table at the speed Policy::in_use_window_paths_per_s assumes. Each host renews at its
// place in the window (a uniform draw per move), and its GetTable waits 1.5 x the window after the
// move. This is the one admission rule that still assumes an SA speed; docs/scale.md ("sm-restart
// with new LIDs at 10,000") measures the ways tried to do without it, none of which held.
// Pure: time and the draw come from the caller.
#pragma once

#include <cstddef>
#include <optional>

#include "core/clock.h"

namespace ibat::core {

class InUseWindow {
 public:
  // A path a request used this recently is in use (the cache's shield from eviction, too).
  static constexpr Duration kInUse = std::chrono::seconds(60);
  // What a GET costs the SA in paths of a table: OpenSM's work per query over its work per path,
  // with the margin in_use_window_paths_per_s keeps (the figures: docs/design.md §3 item 8).
  static constexpr double kGetCostPaths = 6.0;

  // Our LIDs moved at `now`; `draw` in [0, 1) is this host's place in the window.
  void on_lids_moved(TimePoint now, double draw);
  // `paths` in use were set aside for renewal under this move (the largest count is kept).
  void found_in_use(std::size_t paths);

  std::optional<TimePoint> moved_at() const { return moved_at_; }
  // The window of a subnet of `subnet_ports` end ports at `paths_per_s` (0: no window).
  Duration length(std::size_t subnet_ports, double paths_per_s) const;
  // When this host's renewals go.
  TimePoint release_at(std::size_t subnet_ports, double paths_per_s) const;
  // How long after it was wanted at `table_wanted_at` the table waits: 1.5 x the window for a
  // table wanted within kInUse of the move, none otherwise.
  Duration table_hold(TimePoint table_wanted_at, std::size_t subnet_ports, double paths_per_s) const;

 private:
  std::optional<TimePoint> moved_at_;
  std::size_t in_use_ = 0;
  double draw_ = 0;
};

}  // namespace ibat::core
