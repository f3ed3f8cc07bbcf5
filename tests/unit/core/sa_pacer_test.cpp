// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaPacer: the window grows while the SA answers promptly, shrinks on loss and on queueing delay,
// stays within [kMinWindow, max] (never less than one query allowed in flight), and its jittered
// pace is spread and reproducible.
#include <gtest/gtest.h>

#include <set>

#include "core/sa_pacer.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TimePoint at(Duration d) { return TimePoint{d}; }

// A pacer with the port's estimate of the SA, sampled before each answer or loss as the
// SaScheduler samples it.
struct WithEstimate {
  SaRoundTrip sa;
};
struct Paced : WithEstimate, SaPacer {
  Paced(std::uint32_t max_window, std::uint64_t seed) : SaPacer(sa, max_window, seed) {}
  void on_answer(TimePoint sent, TimePoint now) {
    sa.on_answer(now - sent);
    SaPacer::on_answer(sent, now);
  }
  void on_loss(TimePoint sent, TimePoint now) {
    sa.on_lost(now - sent);
    SaPacer::on_loss(sent, now);
  }
  Duration srtt() const { return sa.srtt(); }
  Duration min_rtt() const { return sa.base(); }
};

// One round trip of `rtt` answered at `now`, for a query sent rtt earlier.
void answer(Paced& p, TimePoint& now, Duration rtt) {
  now += rtt;
  p.on_answer(now - rtt, now);
}

TEST(SaPacer, StartsWithASmallWindow) {
  Paced p(64, 1);
  EXPECT_EQ(p.window(), SaPacer::kInitialWindow);
  EXPECT_EQ(p.allowed_inflight(), 1u);
  EXPECT_LE(p.next_send(), at(0s));  // nothing measured yet: no pace
}

TEST(SaPacer, GrowsWhileTheRoundTripIsFlatAndNothingIsLost) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  double last = p.window();
  for (int i = 0; i < 12; ++i) {
    answer(p, now, 100us);
    EXPECT_GE(p.window(), last);
    last = p.window();
  }
  EXPECT_EQ(p.window(), 64.0);  // capped by max_window
  EXPECT_EQ(p.allowed_inflight(), 64u);
}

TEST(SaPacer, LossHalvesTheWindowOnceForTheQueriesInFlight) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 12; ++i) answer(p, now, 1ms);
  ASSERT_EQ(p.window(), 64.0);
  const TimePoint sent = now - 1ms;
  p.on_loss(sent, now);
  EXPECT_EQ(p.window(), 32.0);
  p.on_loss(sent + 10us, now + 100ms);  // in flight with the first: the same congestion event
  EXPECT_EQ(p.window(), 32.0);
  p.on_loss(now + 1ms, now + 200ms);  // sent after the halving: the SA is still swamped
  EXPECT_EQ(p.window(), 16.0);
}

TEST(SaPacer, RoundTripGrowthShrinksTheWindow) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 12; ++i) answer(p, now, 1ms);
  ASSERT_EQ(p.window(), 64.0);
  answer(p, now, 1ms + 50ms);  // 50 ms of queue at the SA, beyond the 10 ms target
  EXPECT_LT(p.window(), 64.0);
  const double after_one = p.window();
  answer(p, now, 1ms + 50ms);
  EXPECT_LT(p.window(), after_one);
}

// Between target/10 and the target, FAST's update: two nodes that start far apart end with the
// same window, the one that keeps kQueueShare of their queries in the queue (w x delay / rtt).
TEST(SaPacer, ModerateQueueingSharesTheSaFairly) {
  Paced small(64, 1), large(64, 2);
  TimePoint t1 = at(1s), t2 = at(1s);
  answer(small, t1, 1ms);
  answer(large, t2, 1ms);
  for (int i = 0; i < 12; ++i) answer(large, t2, 1ms);  // large grew to the cap meanwhile
  ASSERT_EQ(large.window(), 64.0);
  for (int i = 0; i < 60; ++i) {
    answer(small, t1, 1ms + 5ms);
    answer(large, t2, 1ms + 5ms);
  }
  const double fair = SaPacer::kQueueShare * 6.0 / 5.0;
  EXPECT_NEAR(small.window(), fair, 0.01 * fair);
  EXPECT_NEAR(large.window(), fair, 0.01 * fair);
}

// One slow answer in a round is noise (a busy host, a scheduler), not a queue at the SA: the
// round's smallest delay decides.
TEST(SaPacer, OneSlowAnswerInARoundIsNotAQueue) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 3; ++i) answer(p, now, 1ms);
  const double before = p.window();
  // One round trip (srtt ~1 ms) with four answers, one of them 30 ms late.
  p.on_answer(now - 1ms, now + 100us);
  p.on_answer(now - 30ms, now + 200us);
  p.on_answer(now - 1ms, now + 300us);
  p.on_answer(now - 1ms, now + 2ms);  // ends the round
  EXPECT_GE(p.window(), before);
}

// Every node asking at once makes even the first answers late (here 300 ms): that is no queue
// the node can see (the smallest round trip is as late), so the window does not shrink for it.
TEST(SaPacer, UniformlyLateAnswersAreNoQueue) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 12; ++i) answer(p, now, 300ms);
  EXPECT_EQ(p.window(), 64.0);
  EXPECT_EQ(p.min_rtt(), 300ms);
}

// Before any answer there is no round trip to pace by: a lost query's lifetime stands in for it,
// so a node whose first queries are all lost does not send the next ones back to back.
TEST(SaPacer, ALossBeforeAnyAnswerPacesByTheLostQuerysLifetime) {
  Paced p(64, 1);
  const TimePoint now = at(4s);
  p.on_loss(at(1s), now);  // the fabric gave up after 3 s of resends
  EXPECT_EQ(p.srtt(), 3s);
  p.on_send(now);
  EXPECT_GE(p.next_send() - now, SaPacer::kMaxGap / 2);  // min(3 s / window, kMaxGap), jittered
}

TEST(SaPacer, ANewSmRestartsAWindowTheOutageCutAndLateLossesDoNotCutItAgain) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 4; ++i) answer(p, now, 10ms);
  for (int i = 0; i < 6; ++i) {  // the SM gone: every query lost, one at a time
    p.on_send(now);
    const TimePoint sent = now;
    now += 3s;
    p.on_loss(sent, now);
  }
  ASSERT_LT(p.window(), 0.1);
  const TimePoint in_flight = now;  // sent before the restart, lost after it
  p.on_send(in_flight);
  ASSERT_GT(p.next_send(), now + 100ms) << "paced";
  now += 1ms;
  p.restart(now);
  EXPECT_EQ(p.window(), SaPacer::kInitialWindow);
  EXPECT_LE(p.next_send(), now);
  p.on_loss(in_flight, now + 1s);
  EXPECT_EQ(p.window(), SaPacer::kInitialWindow) << "a loss of the old SM's time";
  Paced wide(64, 1);
  TimePoint t = at(1s);
  for (int i = 0; i < 12; ++i) answer(wide, t, 10ms);
  const double w = wide.window();
  ASSERT_GT(w, SaPacer::kInitialWindow);
  wide.restart(t);
  EXPECT_EQ(wide.window(), w) << "a window the outage did not cut stays";
}

TEST(SaPacer, NeverBelowOneInFlightNorAboveTheCap) {
  Paced p(8, 1);
  TimePoint now = at(1s);
  for (int i = 0; i < 100; ++i, now += 1s) p.on_loss(now, now + 1ms);
  EXPECT_EQ(p.window(), SaPacer::kMinWindow);
  EXPECT_EQ(p.allowed_inflight(), 1u);
  for (int i = 0; i < 200; ++i) answer(p, now, 1ms);
  EXPECT_EQ(p.window(), 8.0);
  EXPECT_EQ(p.allowed_inflight(), 8u);
  p.set_max_window(2);
  EXPECT_EQ(p.allowed_inflight(), 2u);
}

TEST(SaPacer, AWindowBelowOneIsAPaceOfSrttOverWindow) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  answer(p, now, 10ms);
  for (int i = 0; i < 6; ++i, now += 1s) p.on_loss(now, now + 1ms);
  const double w = p.window();
  ASSERT_LT(w, 1.0);
  p.on_send(now);
  const Duration gap = p.next_send() - now;
  const double nominal_s = std::chrono::duration<double>(p.srtt()).count() / w;
  ASSERT_LT(nominal_s, 1.0);
  EXPECT_GE(std::chrono::duration<double>(gap).count(), 0.5 * nominal_s);
  EXPECT_LE(std::chrono::duration<double>(gap).count(), 1.5 * nominal_s);
}

TEST(SaPacer, ThePaceIsAtLeastOneQueryASecond) {
  Paced p(64, 1);
  TimePoint now = at(1s);
  answer(p, now, 100ms);
  for (int i = 0; i < 20; ++i, now += 1s) p.on_loss(now, now + 1ms);
  ASSERT_GT(std::chrono::duration<double>(p.srtt()).count() / p.window(), 1.0);
  p.on_send(now);
  EXPECT_LE(p.next_send() - now, SaPacer::kMaxGap * 3 / 2);
}

TEST(SaPacer, JitterSpreadsSendTimesAcrossNodesAndIsReproducible) {
  auto gaps = [](std::uint64_t seed) {
    Paced p(64, seed);
    TimePoint now = at(1s);
    answer(p, now, 10ms);
    std::vector<Duration> out;
    for (int i = 0; i < 8; ++i) {
      p.on_send(now);
      out.push_back(p.next_send() - now);
    }
    return out;
  };
  EXPECT_EQ(gaps(7), gaps(7));
  std::set<Duration::rep> firsts;
  for (std::uint64_t node = 0; node < 100; ++node) firsts.insert(gaps(node).front().count());
  EXPECT_GT(firsts.size(), 95u);  // 100 nodes starting together do not send together again
  const auto g = gaps(3);
  EXPECT_NE(g[0], g[1]);
}

}  // namespace
}  // namespace ibat::core
