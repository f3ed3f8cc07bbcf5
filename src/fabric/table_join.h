// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableJoin: one PathRecord table query's two GetTables, the subnet's PathRecords and beside them
// the switches' NodeRecords (whose port-0 records the paths leave out), joined when both have
// ended, in either order. When the paths fail the switches are of no use: if their GetTable is
// still running it is to be cancelled, and ends there unanswered. Once both have ended, the result:
// the paths, the switches left out if their table could be read; or the failure, with
// TableFallback's verdict on it from the port's SaTables at the send and now (the switches' own
// answer beside the failed paths says the SA is up, not that it refuses tables). Pure: SaClient
// (sa_client_tables.cpp) and ibat-sim's hosts (sim/simulator_tables.cpp) run one a query.
#pragma once

#include <cstdint>

#include "fabric/sa_tables.h"
#include "fabric/table_fallback.h"

namespace ibat::fabric {

class TableJoin {
 public:
  enum class Part : std::uint8_t { paths = 0, switches = 1 };

  // Both GetTables sent now, on a port whose GetTables are `tables`.
  explicit TableJoin(const SaTables& tables) : sent_(tables.sent()) {}
  TableJoin() = default;  // none sent yet (an empty slot of ibat-sim's QueryTable)

  bool running(Part part) const { return !(part == Part::paths ? paths_ended_ : switches_ended_); }
  bool ended() const { return paths_ended_ && switches_ended_; }

  // The PathRecord GetTable ended: `ok`, its table read; else failed (`timed_out`: not answered in
  // time or the SA busy; else refused or unreadable). True: cancel the switches' GetTable, still
  // running; it has ended, unanswered.
  bool paths_ended(bool ok, bool timed_out) {
    paths_ended_ = true;
    paths_ok_ = ok;
    paths_timed_out_ = timed_out;
    if (ok || switches_ended_) return false;
    switches_ended_ = true;
    return true;
  }
  // The NodeRecord GetTable ended: `answered` by the SA, and `read`: its switches could be read.
  void switches_ended(bool answered, bool read) {
    switches_ended_ = true;
    switches_answered_ = answered;
    switches_read_ = answered && read;
  }

  struct Result {
    bool ok;                         // the paths' table was read
    bool leave_out_switches;         // ok, and so was the switches': leave out their port 0
    TableFallback::Verdict verdict;  // !ok: the SA silent meanwhile; GetTables off until the next SM
  };
  // Once ended(): the result, on a port whose GetTables are now `tables`.
  Result result(const SaTables& tables) const {
    if (paths_ok_) return {true, switches_read_, {false, false}};
    return {false, false,
            sent_.failed(paths_timed_out_, switches_answered_, tables.sm_generation(), tables.sa_answers())};
  }

 private:
  TableFallback sent_{0, 0};
  bool paths_ended_ = false;
  bool paths_ok_ = false;
  bool paths_timed_out_ = false;
  bool switches_ended_ = false;
  bool switches_answered_ = false;
  bool switches_read_ = false;
};

}  // namespace ibat::fabric
