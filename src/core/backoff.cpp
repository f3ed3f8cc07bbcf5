// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Backoff and PRNG (see backoff.h).
#include "core/backoff.h"

#include <algorithm>

namespace ibat::core {

std::uint64_t Prng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double Prng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

Duration Prng::uniform(Duration lo, Duration hi) {
  if (hi <= lo) return lo;
  auto span = static_cast<std::uint64_t>((hi - lo).count());
  return lo + Duration{static_cast<Duration::rep>(next() % (span + 1))};
}

Duration backoff_nominal(const Policy& policy, std::uint32_t attempt) {
  Duration delay = policy.retry_base;
  for (std::uint32_t i = 1; i < attempt && delay < policy.retry_max; ++i) delay *= 2;
  return std::min(delay, policy.retry_max);
}

Duration backoff_delay(const Policy& policy, std::uint32_t attempt, Prng& prng) {
  Duration nominal = backoff_nominal(policy, attempt);
  auto spread = std::chrono::duration_cast<Duration>(nominal * policy.retry_jitter);
  return prng.uniform(nominal - spread, nominal + spread);
}

}  // namespace ibat::core
