// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Token bucket arithmetic (see token_bucket.h).
#include "core/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace ibat::core {

TokenBucket::TokenBucket(double rate_per_s, std::uint32_t burst, TimePoint now)
    : rate_per_s_(rate_per_s), burst_(burst), tokens_(burst), last_(now) {}

void TokenBucket::configure(double rate_per_s, std::uint32_t burst, TimePoint now) {
  refill(now);
  rate_per_s_ = rate_per_s;
  burst_ = burst;
  tokens_ = std::min(tokens_, burst_);
}

void TokenBucket::refill(TimePoint now) {
  if (now <= last_) return;
  double elapsed_s = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed_s * rate_per_s_);
  last_ = now;
}

bool TokenBucket::try_take(TimePoint now) {
  refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

TimePoint TokenBucket::next_available(TimePoint now) const {
  double elapsed_s = now > last_ ? std::chrono::duration<double>(now - last_).count() : 0.0;
  double have = std::min(burst_, tokens_ + elapsed_s * rate_per_s_);
  if (have >= 1.0) return now;
  double wait_s = (1.0 - have) / rate_per_s_;
  auto wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(wait_s));
  return now + wait + Duration{1};  // round up so that try_take then succeeds
}

}  // namespace ibat::core
