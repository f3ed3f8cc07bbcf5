// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RoundTripEstimate: how long one remote manager (the SA, or the SM) has lately taken to answer a
// single-MAD request, and the MAD timer that asks for: TCP's retransmission rule (RFC 6298) for
// MADs. Only requests answered at their first attempt are samples (Karn: an answer after a resend
// may belong to either send); the estimate is their 1/8-gain moving average, and every attempt to
// that manager then waits at least twice it, at most kMaxTimerFloor.
// Behind a queue longer than the timer no first attempt is answered in time, so there is no sample:
// timeouts back the floor off as TCP does (TimerBackoff, up to kMaxTimerFloor). The floor bounds each
// attempt from below; it does not multiply the back-off (a GET's four attempts wait at most 4 x 2 s).
// Without it, a queue at the SA deeper than the fixed 200 ms timer has every MAD sent again, and
// OpenSM computes every resend anew: at scale that load is what collapses a job start
// (docs/scale.md measures it). The smoothing is the core's (core::SaRoundTrip, the port's estimate
// of the SA that its SaPacer reads): one implementation of RFC 6298's average.
// Pure, so that ibat-sim (sim/round_trips.h) times its MADs with the same rule.
#pragma once

#include <algorithm>

#include "core/clock.h"
#include "core/sa_round_trip.h"
#include "fabric/retry_policy.h"
#include "fabric/timer_backoff.h"

namespace ibat::fabric {

class RoundTripEstimate {
 public:
  static constexpr core::Duration kMaxTimerFloor = std::chrono::seconds(10);

  // A request answered at its first attempt at `now`, `rtt` after it went out.
  void on_sample(core::Duration rtt, core::TimePoint now) {
    rtt_.on_answer(rtt);
    backoff_.on_sample(now);
  }
  // An attempt's timer, `timer` long, fired at `now` before its answer.
  void on_timeout(core::Duration timer, core::TimePoint now) { backoff_.on_timeout(timer, now, kMaxTimerFloor); }
  core::Duration srtt() const { return rtt_.srtt(); }
  // The least a MAD attempt should wait: 2 x srtt, or the backed-off timer if longer, at most
  // kMaxTimerFloor; zero before any sample or timeout.
  core::Duration timer_floor() const { return std::max(std::min(rtt_.srtt() * 2, kMaxTimerFloor), backoff_.floor()); }
  // `policy` with every attempt's timer at least the floor (RetryPolicy::floor; its back-off and
  // retries unchanged). A GetTable's own timer (table_retry_policy) lies above it.
  RetryPolicy applied_to(RetryPolicy policy) const {
    policy.floor = std::max(policy.floor, timer_floor());
    return policy;
  }

 private:
  core::SaRoundTrip rtt_;  // answers to first attempts alone (Karn)
  TimerBackoff backoff_;
};

}  // namespace ibat::fabric
