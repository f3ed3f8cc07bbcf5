// RoundTripEstimate: how long one remote manager (the SA, or the SM) has lately taken to answer a
// single-MAD request, and the MAD timer that asks for: TCP's retransmission rule (RFC 6298) for
// MADs. Only requests answered at their first attempt are samples (Karn: an answer after a resend
// may belong to either send); the estimate is their 1/8-gain moving average, and every attempt to
// that manager then waits at least twice it, at most kMaxTimerFloor (ibacm's own default timeout).
// Without it, a queue at the SA deeper than the fixed 200 ms timer has every MAD sent again, and
// OpenSM computes every resend anew: at 10,000 hosts that load is what collapses a job start
// (docs/scale.md). Pure, so that ibat-sim (sim/round_trips.h) times its MADs with the same rule.
#pragma once

#include <algorithm>

#include "core/clock.h"
#include "fabric/retry_policy.h"

namespace ibat::fabric {

class RoundTripEstimate {
 public:
  static constexpr core::Duration kMaxTimerFloor = std::chrono::seconds(2);

  // A request answered at its first attempt, `rtt` after it went out.
  void on_sample(core::Duration rtt) {
    srtt_ = have_sample_ ? srtt_ + (rtt - srtt_) / 8 : rtt;
    have_sample_ = true;
  }
  core::Duration srtt() const { return srtt_; }
  // The least a MAD attempt should wait: 2 x srtt, at most kMaxTimerFloor; zero before any sample.
  core::Duration timer_floor() const { return std::min(srtt_ * 2, kMaxTimerFloor); }
  // `policy` with its first timer raised to the floor (its back-off and retries unchanged). A
  // GetTable's own timer (table_retry_policy) lies above the floor: its answer's work is its own.
  RetryPolicy applied_to(RetryPolicy policy) const {
    policy.timeout = std::max(policy.timeout, timer_floor());
    return policy;
  }

 private:
  core::Duration srtt_{0};
  bool have_sample_ = false;
};

}  // namespace ibat::fabric
