// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadTimers: what one port's MAD timers have learnt from its requests to other LIDs, and the
// policy each attempt waits by. Each remote manager's round trip (RoundTripEstimate), by management
// class and LID (the SM's SMInfo answers and the SA's queue are apart, though both sit at the SM's
// LID), and each kind of GetTable's (TableTimer), by attribute and LID. An attempt waits by its
// request's policy with its timers raised to its manager's round trip as measured now, and a
// GetTable's to its kind's TableTimer besides (the GETs' smoothed round trip as the SA's queue).
// Only an answer to a request's first attempt is a sample (Karn: an answer after a resend may
// belong to either send); a single MAD times its manager's round trip, a GetTable its kind's records
// (its long, records-laden answer is no sample of the queue); a timer that fired backs off the
// one it times if its attempt went out after that one's last sample (TimerBackoff). A MAD to the own port (0-hop directed route) is neither timed nor raised.
// Pure, time passed in: MadRequester (ibatd) and ibat-sim (sim/round_trips.h) run it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/types.h"
#include "fabric/retry_policy.h"
#include "fabric/round_trip_estimate.h"
#include "fabric/table_timer.h"

namespace ibat::fabric {

// A request as its timers see it.
struct TimedRequest {
  bool remote = true;           // to another LID (the SA, the SM); false: to the own port
  std::uint8_t mgmt_class = 0;  // the manager's, with `dlid`
  std::uint16_t attr_id = 0;    // a GetTable's kind, with `dlid`
  bool table = false;           // a GetTable (its answer an RMPP message of records)
  core::Lid dlid{};
};

class MadTimers {
 public:
  // `policy` as attempts of `request` should wait by now.
  RetryPolicy policy_now(const TimedRequest& request, const RetryPolicy& policy) const;
  // Attempt `attempt` (0 = the first send) of `request` was answered at `now`, `rtt` after it went
  // out; a GetTable's answer held `records` records.
  void on_answer(const TimedRequest& request, std::uint32_t attempt, core::Duration rtt, std::size_t records,
                 core::TimePoint now);
  // An attempt of `request` timed out at `now`, its timer `fired` long.
  void on_timeout(const TimedRequest& request, core::Duration fired, core::TimePoint now);

  // The round trip of `mgmt_class` requests to `dlid`; null before one was answered at its first
  // attempt or timed out.
  const RoundTripEstimate* round_trip(std::uint8_t mgmt_class, core::Lid dlid) const;
  // The timer of `attr_id` GetTables to `dlid`; null before one was answered or timed out.
  const TableTimer* table_timer(std::uint16_t attr_id, core::Lid dlid) const;

 private:
  static std::uint32_t key(std::uint16_t id, core::Lid dlid) { return static_cast<std::uint32_t>(id) << 16 | dlid.value; }
  template <typename T>
  static const T* find(const std::vector<std::pair<std::uint32_t, T>>& all, std::uint32_t key);
  template <typename T>
  static T& at(std::vector<std::pair<std::uint32_t, T>>& all, std::uint32_t key);

  // A port asks few managers (the SA, the SM) and few kinds of table (paths, switches, size): a
  // short list, searched in order, with room for this many at its first entry so that it is not
  // moved as it fills (ibat-sim keeps one a host: docs/simulator.md, 'What it runs of the fabric').
  static constexpr std::size_t kFew = 4;
  std::vector<std::pair<std::uint32_t, RoundTripEstimate>> round_trips_;  // by mgmt_class << 16 | LID
  std::vector<std::pair<std::uint32_t, TableTimer>> table_timers_;        // by attr_id << 16 | LID
};

}  // namespace ibat::fabric
