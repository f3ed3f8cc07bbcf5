// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadAttempts: the simulator's SaClient and monitor MADs resend on fabric::RetryPolicy's timers
// (200, 400, 800, 1,600 ms +/- 25 %) with one TID, so an answer to an earlier attempt completes the
// request while a resend is pending; the request fails only at the last attempt's timer.
#include <gtest/gtest.h>

#include <random>

#include "sim/mad_attempts.h"

namespace ibat::sim {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kMs = 1'000'000;

struct Harness {
  explicit Harness(double sa_rate) : sa(options(sa_rate), series) {}
  static SaOptions options(double rate) {
    SaOptions o;
    o.set_get_rate(rate);
    o.latency_ns = 0;
    return o;
  }
  // Runs the request sent at 0 until it completes: true if answered; `at` is when.
  bool run(std::int64_t& at, int& timers) {
    mad.send(policy, rng, sa, queue, 0, 0, 1, EventKind::query_answer, EventKind::query_timeout);
    while (!queue.empty()) {
      const Event e = queue.pop();
      at = e.time_ns;
      if (e.kind == EventKind::query_answer && mad.is_answer(e.time_ns)) return true;
      if (e.kind != EventKind::query_timeout || !mad.is_timer(e.time_ns)) continue;
      ++timers;
      if (!mad.next_attempt(policy)) return false;
      mad.send(policy, rng, sa, queue, e.time_ns, 0, 1, EventKind::query_answer, EventKind::query_timeout);
    }
    return false;
  }
  TimeSeries series{1'000'000'000};
  SaModel sa;
  EventQueue queue;
  std::mt19937_64 rng{1};
  fabric::RetryPolicy policy{200ms, 3};
  MadAttempts mad;
};

// The SA takes 300 ms per query: the first attempt's timer (150-250 ms) fires, the resend queues
// behind it, and the first attempt's answer at 300 ms completes the request.
TEST(MadAttempts, AnAnswerToAnEarlierAttemptCompletesTheRequest) {
  Harness h(1.0 / 0.3);
  std::int64_t at = 0;
  int timers = 0;
  ASSERT_TRUE(h.run(at, timers));
  EXPECT_EQ(at, 300 * kMs);
  EXPECT_EQ(timers, 1);
  EXPECT_EQ(h.sa.totals().arrived, 2u);  // the resend reached the SA and costs it work all the same
}

TEST(MadAttempts, APromptAnswerNeedsNoResend) {
  Harness h(1000.0);
  std::int64_t at = 0;
  int timers = 0;
  ASSERT_TRUE(h.run(at, timers));
  EXPECT_EQ(at, 1 * kMs);
  EXPECT_EQ(timers, 0);
  EXPECT_EQ(h.sa.totals().arrived, 1u);
}

// Nothing answers: four attempts, timers doubling up to 8 x, the request fails at the fourth.
TEST(MadAttempts, UnansweredAttemptsBackOffAndFailAtTheLastTimer) {
  Harness h(1000.0);
  h.sa.add_outage(0, 60'000 * kMs);
  std::int64_t at = 0;
  int timers = 0;
  ASSERT_FALSE(h.run(at, timers));
  EXPECT_EQ(timers, 4);
  EXPECT_EQ(h.sa.totals().arrived, 4u);
  // 200 + 400 + 800 + 1,600 ms, each +/- 25 %.
  EXPECT_GE(at, 2'250 * kMs);
  EXPECT_LE(at, 3'750 * kMs);
}

}  // namespace
}  // namespace ibat::sim
