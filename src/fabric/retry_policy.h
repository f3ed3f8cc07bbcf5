// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RetryPolicy: how long MadRequester waits for each attempt of a MAD before resending it (the
// same TID, so an answer to any attempt completes the request), and how often. Pure, so that
// ibat-sim's model of the fabric (sim/mad_attempts.h) times its resends with the same rule:
// attempt k waits max(timeout x min(2^k, max_backoff_factor), floor), +/- jitter.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/clock.h"

namespace ibat::fabric {

struct RetryPolicy {
  core::Duration timeout = std::chrono::milliseconds(200);  // first attempt
  std::uint32_t retries = 3;                                // resends after the first attempt
  double jitter = 0.25;                                     // +/- fraction of each attempt timeout
  std::uint32_t max_backoff_factor = 8;                     // attempt timeout <= timeout * this
  core::Duration floor{0};  // every attempt waits at least this, before jitter (RoundTripEstimate)

  // The timer of attempt `attempt` (0 = first send); `spread` in [-1, 1] picks the jitter.
  core::Duration attempt_timeout(std::uint32_t attempt, double spread) const {
    const std::uint32_t factor = std::min(1U << std::min(attempt, 16U), max_backoff_factor);
    const double base = std::max(static_cast<double>(timeout.count()) * factor, static_cast<double>(floor.count()));
    const double jittered = base * (1.0 + jitter * std::clamp(spread, -1.0, 1.0));
    return core::Duration(static_cast<core::Duration::rep>(std::max(jittered, 1.0)));
  }
};

// The MAD timers of a GetTable: the SA computes a whole subnet's records for it (docs/design.md
// gives OpenSM's time per record) and computes them again for every resend, and the SA's kernel resends a lost RMPP
// segment only after 2 s without its ACK (mad_rmpp.c); so its first wait is 20 x a GET's (4 s at
// the default 200 ms) and it is sent at most twice (the Resolver asks a lost table again, with backoff).
// That is the least; TableTimer raises it to the records the SA computes for it at its measured speed.
inline RetryPolicy table_retry_policy(const RetryPolicy& get_policy) {
  RetryPolicy p = get_policy;
  p.timeout = get_policy.timeout * 20;
  p.retries = std::min<std::uint32_t>(get_policy.retries, 1);
  return p;
}

}  // namespace ibat::fabric
