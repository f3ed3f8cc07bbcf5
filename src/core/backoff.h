// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Retry backoff: exponential from retry_base, capped at retry_max, with +/- retry_jitter spread
// drawn from a seeded PRNG so that runs are reproducible.
#pragma once

#include <cstdint>

#include "core/clock.h"
#include "core/policy.h"

namespace ibat::core {

// SplitMix64: tiny, fast, fully specified (the same sequence on every platform).
class Prng {
 public:
  explicit Prng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform01();  // in [0, 1)
  // Uniform in [lo, hi].
  Duration uniform(Duration lo, Duration hi);

 private:
  std::uint64_t state_;
};

// Nominal (jitter-free) delay before retry number `attempt` (1 = first retry).
Duration backoff_nominal(const Policy& policy, std::uint32_t attempt);
// Nominal delay spread uniformly over [nominal * (1 - jitter), nominal * (1 + jitter)].
Duration backoff_delay(const Policy& policy, std::uint32_t attempt, Prng& prng);

}  // namespace ibat::core
