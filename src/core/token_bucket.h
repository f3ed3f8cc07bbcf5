// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Token bucket that shapes new SA queries: `rate` tokens per second, at most `burst` saved up.
#pragma once

#include <cstdint>

#include "core/clock.h"

namespace ibat::core {

class TokenBucket {
 public:
  TokenBucket(double rate_per_s, std::uint32_t burst, TimePoint now);

  // Changes rate and depth, keeping the tokens saved so far (clamped to the new depth).
  void configure(double rate_per_s, std::uint32_t burst, TimePoint now);
  // Takes one token if available.
  bool try_take(TimePoint now);
  // The earliest time at which try_take can succeed (now if a token is available).
  TimePoint next_available(TimePoint now) const;

 private:
  void refill(TimePoint now);

  double rate_per_s_;
  double burst_;
  double tokens_;
  TimePoint last_;
};

}  // namespace ibat::core
