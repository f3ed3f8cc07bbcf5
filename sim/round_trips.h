// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The MAD timers of each simulated ibatd: one fabric::MadTimers per node, the object its
// MadRequester keeps, fed the simulated MADs' attempts, answers and timeouts, so that they wait as
// long as the real ones (the policy composition and Karn's sample rule are MadTimers'). The sim
// names the managers and the kinds of GetTable (Manager, TableKind) where ibatd has management
// classes and attributes; MadTimers only tells them apart. One SM, at one LID throughout.
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/mad_timers.h"
#include "fabric/retry_policy.h"
#include "sim/mad_attempts.h"

namespace ibat::sim {

enum class Manager : std::uint8_t { sa = 0, sm = 1 };
// The GetTables a daemon sends, by attribute: PathRecords, the switches' NodeRecords, and the
// SwitchInfoRecords of the size query.
enum class TableKind : std::uint8_t { paths = 0, switches = 1, size = 2 };

class RoundTrips {
 public:
  // `follow` false: every policy stays as given (Scenario::mad_timers_follow_rtt).
  RoundTrips(std::uint32_t nodes, bool follow) : timers_(nodes), follow_(follow) {}

  // `policy` as MadRequester applies it to an attempt of `node` to `manager`.
  fabric::RetryPolicy applied_to(std::uint32_t node, Manager manager, const fabric::RetryPolicy& policy) const {
    return follow_ ? timers_[node].policy_now(request(manager), policy) : policy;
  }
  // The answer (at `answer_ns`) to a single-MAD request `mad` of `node` (not a GetTable).
  void on_answer(std::uint32_t node, Manager manager, const MadAttempts& mad, std::int64_t answer_ns) {
    timers_[node].on_answer(request(manager), mad.attempt(), core::Duration(answer_ns - mad.sent_ns()), 0, at(answer_ns));
  }
  // The running attempt of `mad` timed out at `now_ns` (before next_attempt()).
  void on_timeout(std::uint32_t node, Manager manager, const MadAttempts& mad, std::int64_t now_ns) {
    timers_[node].on_timeout(request(manager), core::Duration(now_ns - mad.sent_ns()), at(now_ns));
  }
  // `policy` as MadRequester applies it to an attempt of a `kind` GetTable of `node`.
  fabric::RetryPolicy table_policy(std::uint32_t node, TableKind kind, const fabric::RetryPolicy& policy) const {
    return follow_ ? timers_[node].policy_now(request(kind), policy) : policy;
  }
  // The answer (at `answer_ns`) to GetTable `mad` of `node`, `records` long.
  void on_table_answer(std::uint32_t node, TableKind kind, const MadAttempts& mad, std::int64_t answer_ns,
                       std::size_t records) {
    timers_[node].on_answer(request(kind), mad.attempt(), core::Duration(answer_ns - mad.sent_ns()), records, at(answer_ns));
  }
  // A `kind` GetTable of `node`, `records` long, answered at its first attempt `rtt` after it went.
  void on_table_sample(std::uint32_t node, TableKind kind, core::Duration rtt, std::size_t records, std::int64_t now_ns) {
    timers_[node].on_answer(request(kind), 0, rtt, records, at(now_ns));
  }
  // The running attempt of GetTable `mad` timed out at `now_ns` (before next_attempt()).
  void on_table_timeout(std::uint32_t node, TableKind kind, const MadAttempts& mad, std::int64_t now_ns) {
    timers_[node].on_timeout(request(kind), core::Duration(now_ns - mad.sent_ns()), at(now_ns));
  }

 private:
  static constexpr core::Lid kSmLid{1};  // any LID: the simulated SM and SA never move
  static core::TimePoint at(std::int64_t ns) { return core::TimePoint(core::Duration(ns)); }

  static fabric::TimedRequest request(Manager manager) {
    return {.remote = true, .mgmt_class = static_cast<std::uint8_t>(manager), .attr_id = 0, .table = false, .dlid = kSmLid};
  }
  // A GetTable goes to the SA, its queue the SA's GETs' round trip.
  static fabric::TimedRequest request(TableKind kind) {
    return {.remote = true,
            .mgmt_class = static_cast<std::uint8_t>(Manager::sa),
            .attr_id = static_cast<std::uint16_t>(kind),
            .table = true,
            .dlid = kSmLid};
  }

  std::vector<fabric::MadTimers> timers_;
  bool follow_;
};

}  // namespace ibat::sim
