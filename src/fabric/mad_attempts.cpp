// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadAttempts: one MAD request's attempts, timers and resend rule (see mad_attempts.h).
#include "fabric/mad_attempts.h"

#include <algorithm>

namespace ibat::fabric {

core::TimePoint MadAttempts::send(core::TimePoint now, const RetryPolicy& policy, std::mt19937_64& rng) {
  sent_ = now;
  deadline_ = now + policy.attempt_timeout(attempt_, std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
  return deadline_;
}

bool MadAttempts::timed_out(const RetryPolicy& policy) {
  deadline_ = kNoTimer;
  if (attempt_ >= policy.retries) return false;
  ++attempt_;
  return true;
}

AttemptAnswer MadAttempts::answered(core::TimePoint now) {
  deadline_ = kNoTimer;
  return {.attempt = attempt_, .round_trip = now - sent_};
}

// With only the attempt's own timeout the kernel drops a late answer to it while a resend waits for
// the same TID (as the lab's twin of the kernel showed under load: docs/fabric.md).
std::uint32_t MadAttempts::kernel_wait_ms(const RetryPolicy& policy) const {
  core::Duration wait{0};
  for (std::uint32_t k = attempt_; k <= policy.retries; ++k) wait += policy.attempt_timeout(k, 1.0);
  return static_cast<std::uint32_t>(std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
}

}  // namespace ibat::fabric
