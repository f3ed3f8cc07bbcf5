// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaTables: whether one port's GetTables are on, and the two figures a GetTable is judged by when
// it fails (TableFallback): the port's SM changes and its SA answers so far. GetTables go off when
// a failed PathRecord table's verdict says so, with its failure as the reason, and come back on at
// the next SM; without RMPP in the MAD layer (umad2sim) they are off from the start and stay off,
// whatever the SM. A GetTable asked while they are off is refused, and the first refusal after
// they went off is the one to report.
// An SA answer is every answer SaClient receives, whatever its status: a PathRecord GET's, the
// IPoIB broadcast group's MCMemberRecord GET's and each GetTable's (paths, switches, the subnet's
// size). The trap subscriber's InformInfo MADs and the SM's SMInfo answers go past SaClient and do
// not count. Pure: SaClient (ibatd) keeps one a port, and so does each of ibat-sim's hosts
// (sim/simulator_tables.cpp), its monitor's broadcast-group answers counted as ibatd counts them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "fabric/table_fallback.h"

namespace ibat::fabric {

class SaTables {
 public:
  // `rmpp`: the MAD layer joins RMPP answers; false: GetTables are off for good.
  explicit SaTables(bool rmpp) : rmpp_(rmpp) {
    if (!rmpp_) off_reason_ = "the MAD layer has no RMPP (umad2sim): a GetTable answer would arrive cut";
  }

  bool usable() const { return off_reason_.empty(); }
  const std::string& off_reason() const { return off_reason_; }
  // A GetTable was asked while off: true the first time since they went off (report it then).
  bool refuse() { return !std::exchange(reported_, true); }
  // GetTables go off for `reason` unless off already; true: they went off now (report it).
  bool turn_off(std::string reason) {
    if (!usable()) return false;
    off_reason_ = std::move(reason);
    reported_ = true;
    return true;
  }
  // A new SM: GetTables on again (not without RMPP); tables sent before it no longer turn them off.
  void on_sm_changed() {
    ++sm_generation_;
    if (!rmpp_) return;  // no RMPP stays no RMPP: reported once, not per SM
    off_reason_.clear();
    reported_ = false;
  }

  // The SA answered the port (see above for what counts).
  void on_sa_answer() { ++sa_answers_; }
  // What a GetTable sent now is judged by if it fails.
  TableFallback sent() const { return {sm_generation_, sa_answers_}; }
  std::uint64_t sm_generation() const { return sm_generation_; }
  std::uint64_t sa_answers() const { return sa_answers_; }

 private:
  std::string off_reason_;  // empty: GetTables are on
  std::uint64_t sm_generation_ = 0;  // on_sm_changed calls so far
  std::uint64_t sa_answers_ = 0;
  bool rmpp_;
  bool reported_ = false;  // the refusals of this time off were reported
};

}  // namespace ibat::fabric
