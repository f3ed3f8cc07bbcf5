// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// When a failed PathRecord GetTable turns a port's GetTables off (the Resolver then asks by GET
// until the next SM) and when it does not. A table that failed under the SM it was sent to, while
// the SA answered this port something else, was refused or cannot be had from this SA: tables
// off. One that timed out while the SA answered nothing else (its own NodeRecord GetTable beside
// it aside) says the SA is down, sweeping or busy computing tables: GETs for now, tables stay on.
// One sent under an earlier SM says nothing of the new one. Pure, so that ibat-sim's daemons
// (sim/simulator_tables.cpp) fall back by the rule SaClient (sa_client_tables.cpp) runs.
#pragma once

#include <cstdint>

namespace ibat::fabric {

class TableFallback {
 public:
  // A table sent under the port's `sm_generation`-th SM, when the SA had answered it `sa_answers`
  // times.
  TableFallback(std::uint64_t sm_generation, std::uint64_t sa_answers)
      : sm_generation_(sm_generation), sa_answers_(sa_answers) {}

  struct Verdict {
    bool sa_silent;   // timed out with nothing else answered meanwhile: the SA down or busy
    bool tables_off;  // GetTables off until the next SM
  };
  // The PathRecord table failed (`timed_out`: unanswered; else refused or unreadable); the port is
  // now under its `sm_generation`-th SM, has had `sa_answers` answers in all, and the NodeRecord
  // GetTable sent beside the failed one was answered or not.
  Verdict failed(bool timed_out, bool switches_answered, std::uint64_t sm_generation,
                 std::uint64_t sa_answers) const {
    const std::uint64_t others = sa_answers - sa_answers_ - (switches_answered ? 1 : 0);
    const bool silent = timed_out && others == 0;
    return {silent, sm_generation == sm_generation_ && !silent};
  }

 private:
  std::uint64_t sm_generation_;
  std::uint64_t sa_answers_;
};

}  // namespace ibat::fabric
