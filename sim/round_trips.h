// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The round trips each simulated ibatd's MadRequester has measured (fabric/round_trip_estimate.h),
// so that the simulated MADs wait as long as the real ones: per node, the SA's (GETs, trap
// subscriptions, broadcast-group reads) and the SM's (SMInfo), apart as MadRequester keeps them by
// management class. A sample is an answer to a request's first attempt (Karn); a timer that fired
// backs the floor off (RoundTripEstimate::on_timeout) until the next sample. GetTables are no
// sample of either (MadRequester::times_round_trip): each kind has its own fabric::TableTimer, as
// MadRequester keeps one per attribute, raised to the SA's floor besides.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fabric/retry_policy.h"
#include "fabric/round_trip_estimate.h"
#include "fabric/table_timer.h"
#include "sim/mad_attempts.h"

namespace ibat::sim {

enum class Manager : std::uint8_t { sa = 0, sm = 1 };
// The GetTables a daemon sends, by attribute: PathRecords, the switches' NodeRecords, and the
// SwitchInfoRecords of the size query.
enum class TableKind : std::uint8_t { paths = 0, switches = 1, size = 2 };

class RoundTrips {
 public:
  // `follow` false: every policy stays as given (Scenario::mad_timers_follow_rtt).
  RoundTrips(std::uint32_t nodes, bool follow) : estimates_(nodes), tables_(nodes), follow_(follow) {}

  // `policy` as MadRequester applies it to an attempt of `node` to `manager`.
  fabric::RetryPolicy applied_to(std::uint32_t node, Manager manager, const fabric::RetryPolicy& policy) const {
    return follow_ ? estimate(node, manager).applied_to(policy) : policy;
  }
  // The answer (at `answer_ns`) to a single-MAD request `mad` of `node` (not a GetTable): a sample
  // if it answered the first attempt.
  void on_answer(std::uint32_t node, Manager manager, const MadAttempts& mad, std::int64_t answer_ns) {
    if (mad.attempt() == 0) at(node, manager).on_sample(core::Duration(answer_ns - mad.sent_ns()));
  }
  // The running attempt of `mad` timed out at `now_ns` (before next_attempt()).
  void on_timeout(std::uint32_t node, Manager manager, const MadAttempts& mad, std::int64_t now_ns) {
    at(node, manager).on_timeout(core::Duration(now_ns - mad.sent_ns()));
  }
  // `policy` as MadRequester applies it to an attempt of a `kind` GetTable of `node`.
  fabric::RetryPolicy table_policy(std::uint32_t node, TableKind kind, const fabric::RetryPolicy& policy) const {
    if (!follow_) return policy;
    const fabric::RoundTripEstimate& sa = estimate(node, Manager::sa);
    return table(node, kind).applied_to(sa.applied_to(policy), sa.srtt());
  }
  // The answer (at `answer_ns`) to GetTable `mad` of `node`, `records` long: a sample if it
  // answered the first attempt.
  void on_table_answer(std::uint32_t node, TableKind kind, const MadAttempts& mad, std::int64_t answer_ns,
                       std::size_t records) {
    if (mad.attempt() == 0) on_table_sample(node, kind, core::Duration(answer_ns - mad.sent_ns()), records);
  }
  // A `kind` GetTable of `node`, `records` long, answered at its first attempt `rtt` after it went.
  void on_table_sample(std::uint32_t node, TableKind kind, core::Duration rtt, std::size_t records) {
    table_at(node, kind).on_sample(rtt, records, estimate(node, Manager::sa).srtt());
  }
  // The running attempt of GetTable `mad` timed out at `now_ns` (before next_attempt()).
  void on_table_timeout(std::uint32_t node, TableKind kind, const MadAttempts& mad, std::int64_t now_ns) {
    table_at(node, kind).on_timeout(core::Duration(now_ns - mad.sent_ns()));
  }
  const fabric::TableTimer& table(std::uint32_t node, TableKind kind) const {
    return tables_[node][static_cast<std::size_t>(kind)];
  }
  const fabric::RoundTripEstimate& estimate(std::uint32_t node, Manager manager) const {
    return estimates_[node][static_cast<std::size_t>(manager)];
  }

 private:
  fabric::RoundTripEstimate& at(std::uint32_t node, Manager manager) {
    return estimates_[node][static_cast<std::size_t>(manager)];
  }

  fabric::TableTimer& table_at(std::uint32_t node, TableKind kind) { return tables_[node][static_cast<std::size_t>(kind)]; }

  std::vector<std::array<fabric::RoundTripEstimate, 2>> estimates_;
  std::vector<std::array<fabric::TableTimer, 3>> tables_;
  bool follow_;
};

}  // namespace ibat::sim
