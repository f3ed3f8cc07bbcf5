// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The subnet's window for renewing paths in use after a LID move (see in_use_window.h).
#include "core/in_use_window.h"

#include <algorithm>

namespace ibat::core {

void InUseWindow::on_lids_moved(TimePoint now, double draw) {
  moved_at_ = now;
  in_use_ = 0;
  draw_ = draw;
}

void InUseWindow::found_in_use(std::size_t paths) { in_use_ = std::max(in_use_, paths); }

// If every host has as many paths in use as this one, the subnet's renewals are n x in_use GETs
// of SA work, each kGetCostPaths paths of a table.
Duration InUseWindow::length(std::size_t subnet_ports, double paths_per_s) const {
  if (paths_per_s <= 0 || in_use_ == 0) return Duration::zero();
  const double gets = static_cast<double>(subnet_ports) * static_cast<double>(in_use_);
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(gets * kGetCostPaths / paths_per_s));
}

TimePoint InUseWindow::release_at(std::size_t subnet_ports, double paths_per_s) const {
  return moved_at_.value_or(TimePoint{}) +
         std::chrono::duration_cast<Duration>(length(subnet_ports, paths_per_s) * draw_);
}

Duration InUseWindow::table_hold(TimePoint table_wanted_at, std::size_t subnet_ports, double paths_per_s) const {
  const bool just_moved = moved_at_ && table_wanted_at - *moved_at_ < kInUse;
  return just_moved ? length(subnet_ports, paths_per_s) * 3 / 2 : Duration::zero();
}

}  // namespace ibat::core
