// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// sm-restart --lid-change: how long after the SM change the cached paths carry the new DLIDs —
// those in use (every node's working set) and all of them — seen through each Resolver's path
// observer (an SA answer, GET or GetTable, that moved a path's DLID). The working set is taken as
// cached at the change (it is, after a few seconds of traffic). RunResult::in_use_renewed_s and
// all_renewed_s, counted from the SM change.
#include "sim/simulator.h"

namespace ibat::sim {

void Simulator::watch_renewal() {
  for (std::uint32_t n = 0; n < sc_.nodes; ++n) {
    nodes_[n].resolver->set_path_observer([this, n](const core::PathChange& c) { on_path_change(n, c); });
  }
}

// At the SM change, before any Resolver hears of it: every path cached carries an old DLID.
void Simulator::start_renewal() {
  renewal_.sm_change_ns = now_ns_;
  renewal_.in_use_left = static_cast<std::uint64_t>(sc_.nodes) * working_set_;
  renewal_.nodes_left = 0;
  for (Node& node : nodes_) {
    node.old_paths = static_cast<std::uint32_t>(node.resolver->stats().entries);
    if (node.old_paths > 0) ++renewal_.nodes_left;
  }
}

void Simulator::on_path_change(std::uint32_t n, const core::PathChange& change) {
  if (renewal_.sm_change_ns < 0) return;
  const std::uint32_t dest = node_of(change.dgid);
  const bool was_old = change.old_dlid.value >= 1 && change.old_dlid.value <= sc_.nodes;
  if (!was_old || dest >= sc_.nodes || change.dlid != lid_of(dest)) return;
  Node& node = nodes_[n];
  if (node.old_paths > 0 && --node.old_paths == 0 && --renewal_.nodes_left == 0) renewal_.all_done_ns = now_ns_;
  if (in_working_set(n, dest) && renewal_.in_use_left > 0 && --renewal_.in_use_left == 0) {
    renewal_.in_use_done_ns = now_ns_;
  }
}

bool Simulator::in_working_set(std::uint32_t n, std::uint32_t dest) const {
  const std::uint32_t offset = (dest + sc_.nodes - n - 1) % sc_.nodes;
  const std::uint32_t stride = (sc_.nodes - 1) / working_set_;
  return dest != n && offset % stride == 0 && offset / stride < working_set_;
}

}  // namespace ibat::sim
