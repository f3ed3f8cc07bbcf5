// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Policy validation, retry backoff (docs/design.md §3, invariant 6) and the token bucket (invariant 5).
#include <gtest/gtest.h>

#include "core/backoff.h"
#include "core/policy.h"
#include "core/token_bucket.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TEST(Policy, DefaultsAreValid) { EXPECT_EQ(Policy{}.validate(), ""); }

TEST(Policy, MessagesNameTheFieldAndRange) {
  Policy p;
  p.sa_max_inflight = 0;
  EXPECT_NE(p.validate().find("sa_max_inflight must be in [1, 65535]"), std::string::npos) << p.validate();
  p = Policy{};
  p.retry_max = 100ms;
  EXPECT_NE(p.validate().find("retry_max must be >= retry_base"), std::string::npos) << p.validate();
  p = Policy{};
  p.retry_jitter = 1.5;
  EXPECT_NE(p.validate().find("retry_jitter must be in [0, 1)"), std::string::npos);
  p = Policy{};
  p.sa_rate = -1;
  EXPECT_NE(p.validate().find("sa_rate"), std::string::npos);
  p = Policy{};
  p.capacity = 0;
  EXPECT_NE(p.validate().find("capacity"), std::string::npos);
  p = Policy{};
  p.default_pkey = Pkey{0x8000};
  EXPECT_NE(p.validate().find("default_pkey"), std::string::npos);
  p = Policy{};
  p.request_timeout = 0s;
  EXPECT_NE(p.validate().find("request_timeout must be > 0"), std::string::npos);
  p = Policy{};
  p.in_use_window_paths_per_s = 500;  // would spread a 1,000-port subnet's tables over 2,000 s
  EXPECT_NE(p.validate().find("in_use_window_paths_per_s must be 0 or in [1000, 1000000000]"), std::string::npos)
      << p.validate();
  p.in_use_window_paths_per_s = 0;  // off
  EXPECT_EQ(p.validate(), "");
  p.expected_subnet_ports = 10'000'001;
  EXPECT_NE(p.validate().find("expected_subnet_ports must be in [0, 10000000]"), std::string::npos) << p.validate();
}

TEST(Backoff, NominalDoublesUpToTheCap) {
  Policy p;
  p.retry_base = 250ms;
  p.retry_max = 2s;
  EXPECT_EQ(backoff_nominal(p, 1), 250ms);
  EXPECT_EQ(backoff_nominal(p, 2), 500ms);
  EXPECT_EQ(backoff_nominal(p, 3), 1s);
  EXPECT_EQ(backoff_nominal(p, 4), 2s);
  EXPECT_EQ(backoff_nominal(p, 30), 2s);
}

TEST(Backoff, JitterStaysInsideItsBoundsAndSpreads) {
  Policy p;
  p.retry_base = 100ms;
  p.retry_max = 8s;
  p.retry_jitter = 0.25;
  Prng prng(7);
  for (std::uint32_t attempt = 1; attempt <= 10; ++attempt) {
    Duration nominal = backoff_nominal(p, attempt);
    Duration lo = nominal, hi = nominal;
    for (int i = 0; i < 2000; ++i) {
      Duration d = backoff_delay(p, attempt, prng);
      ASSERT_GE(d, nominal * 3 / 4) << "attempt " << attempt;
      ASSERT_LE(d, nominal * 5 / 4) << "attempt " << attempt;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    // Jitter really spreads: the draws cover most of the +/-25% band.
    EXPECT_LT(lo, nominal * 80 / 100);
    EXPECT_GT(hi, nominal * 120 / 100);
  }
}

TEST(Backoff, ZeroJitterIsExact) {
  Policy p;
  p.retry_jitter = 0;
  Prng prng(1);
  EXPECT_EQ(backoff_delay(p, 3, prng), backoff_nominal(p, 3));
}

TEST(Prng, SameSeedSameSequence) {
  Prng a(99), b(99), c(100);
  for (int i = 0; i < 10; ++i) {
    auto x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

TEST(TokenBucket, BurstThenRate) {
  TimePoint t{1s};
  TokenBucket bucket(10.0, 3, t);
  EXPECT_TRUE(bucket.try_take(t));
  EXPECT_TRUE(bucket.try_take(t));
  EXPECT_TRUE(bucket.try_take(t));
  EXPECT_FALSE(bucket.try_take(t));
  TimePoint next = bucket.next_available(t);
  EXPECT_GT(next, t + 99ms);
  EXPECT_LE(next, t + 101ms);
  EXPECT_FALSE(bucket.try_take(t + 99ms));
  EXPECT_TRUE(bucket.try_take(next));
  // Tokens never accumulate past the depth.
  TimePoint later = t + 1h;
  int taken = 0;
  while (bucket.try_take(later)) ++taken;
  EXPECT_EQ(taken, 3);
}

}  // namespace
}  // namespace ibat::core
