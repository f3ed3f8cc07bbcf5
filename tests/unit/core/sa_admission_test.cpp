// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaAdmission: the one send rule of a port's GETs. The in-flight cap is the pacer's window (at most
// sa_max_inflight), the pacer's pace and the token bucket hold every kind, a late GET goes when
// its deadlines make it due while the table is awaited (only sa_max_inflight and the bucket hold
// it then), and an SM change lets the next GET go at once.
#include <gtest/gtest.h>

#include "core/sa_admission.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TimePoint at(Duration d) { return TimePoint{d}; }

Policy policy(std::uint32_t max_inflight = 64, double rate = 1000, std::uint32_t burst = 100) {
  Policy p;
  p.sa_max_inflight = max_inflight;
  p.sa_rate = rate;
  p.sa_burst = burst;
  return p;
}

// Sends one GET of `kind` if the admission lets it go now; returns whether it went.
bool send(SaAdmission& a, Traffic kind, const SendLoad& load, TimePoint now) {
  auto when = a.earliest(kind, load, now);
  if (!when || *when > now) return false;
  a.on_sent(now);
  return true;
}

TEST(SaAdmission, TheWindowCapsWhatIsInFlight) {
  SaRoundTrip sa;  // the port's estimate of the SA, sampled as the SaScheduler does
  SaAdmission a(policy(), at(0s), 1, sa);
  ASSERT_EQ(a.window(), 1u);  // the pacer starts with one query in flight
  EXPECT_TRUE(a.earliest(Traffic::waited, {.inflight = 0}, at(0s)).has_value());
  EXPECT_FALSE(a.earliest(Traffic::waited, {.inflight = 1}, at(0s)).has_value());
  EXPECT_FALSE(a.earliest(Traffic::background, {.inflight = 1}, at(0s)).has_value());
}

TEST(SaAdmission, ThePaceHoldsTheNextGetAfterAnAnswer) {
  SaRoundTrip sa;
  SaAdmission a(policy(), at(0s), 1, sa);
  TimePoint now = at(1s);
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  now += 10ms;
  sa.on_answer(10ms);
  a.on_result(now - 10ms, now, false);  // srtt 10 ms: the next waits about that
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  const auto next = a.earliest(Traffic::waited, {}, now);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, now);
  EXPECT_LE(*next - now, 15ms);  // srtt / window, jittered by at most 1.5 x
}

TEST(SaAdmission, TheTokenBucketBoundsEveryKind) {
  Policy p = policy(64, 10, 2);
  p.sa_adaptive = false;  // the bucket alone
  SaRoundTrip sa;
  SaAdmission a(p, at(0s), 1, sa);
  const TimePoint now = at(0s);
  EXPECT_TRUE(send(a, Traffic::waited, {}, now));
  EXPECT_TRUE(send(a, Traffic::background, {}, now));
  const auto next = a.earliest(Traffic::waited, {}, now);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, now + 99ms);  // 10 a second: the third token in 100 ms
  EXPECT_LE(*next, now + 101ms);
  SendLoad awaited{.table_awaited = true, .late_due = now};
  EXPECT_GT(*a.earliest(Traffic::late, awaited, now), now);  // a late GET due now needs a token too
}

TEST(SaAdmission, ALateGetGoesWhenItIsDueWhateverThePacerSays) {
  SaRoundTrip sa;
  SaAdmission a(policy(4), at(0s), 1, sa);
  TimePoint now = at(1s);
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  now += 2s;
  sa.on_answer(2s);
  a.on_result(now - 2s, now, false);  // srtt 2 s: the pacer's next GET waits about that
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  const TimePoint paced = *a.earliest(Traffic::waited, {.inflight = 0}, now);
  ASSERT_GT(paced, now + 500ms);
  const SendLoad due_soon{.inflight = 0, .table_awaited = true, .late_due = now + 100ms};
  EXPECT_EQ(*a.earliest(Traffic::late, due_soon, now), now + 100ms) << "its deadlines, before the pace";
  EXPECT_FALSE(a.eligible(Traffic::late, due_soon, now)) << "not yet: a background GET may go meanwhile";
  EXPECT_TRUE(a.eligible(Traffic::late, due_soon, now + 100ms));
  const SendLoad due_late{.inflight = 0, .table_awaited = true, .late_due = now + 60s};
  EXPECT_EQ(*a.earliest(Traffic::late, due_late, now), now + 60s) << "not sooner: the table may bring it first";
  // Due, it goes past the pacer's window (1 here), up to sa_max_inflight only.
  const SendLoad due_now{.inflight = 3, .table_awaited = true, .late_due = now};
  EXPECT_FALSE(a.earliest(Traffic::waited, due_now, now).has_value());
  EXPECT_EQ(*a.earliest(Traffic::late, due_now, now), now);
  EXPECT_FALSE(a.earliest(Traffic::late, {.inflight = 4, .table_awaited = true, .late_due = now}, now).has_value());
  // No table awaited: a late GET is any GET.
  EXPECT_FALSE(a.earliest(Traffic::late, {.inflight = 3, .table_awaited = false, .late_due = now}, now).has_value());
  EXPECT_EQ(*a.earliest(Traffic::late, {.inflight = 0, .table_awaited = false, .late_due = now}, now), paced);
}

TEST(SaAdmission, AnSmChangeLetsTheNextGetGoAtOnce) {
  SaRoundTrip sa;
  SaAdmission a(policy(), at(0s), 1, sa);
  TimePoint now = at(1s);
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  sa.on_lost(2s);
  a.on_result(now - 2s, now, true);  // lost: its lifetime stands in for the round trip
  ASSERT_TRUE(send(a, Traffic::waited, {}, now));
  ASSERT_GT(*a.earliest(Traffic::waited, {}, now), now);
  a.on_sm_changed(now);
  EXPECT_EQ(*a.earliest(Traffic::waited, {}, now), now);
}

TEST(SaAdmission, AReloadKeepsTheTokensAndTakesTheNewCap) {
  Policy p = policy(64, 1, 1);
  p.sa_adaptive = false;
  SaRoundTrip sa;
  SaAdmission a(p, at(0s), 1, sa);
  ASSERT_TRUE(send(a, Traffic::waited, {}, at(0s)));
  p.sa_max_inflight = 2;
  p.sa_burst = 5;
  a.configure(p, at(0s));
  EXPECT_EQ(a.window(), 2u);
  EXPECT_GT(*a.earliest(Traffic::waited, {}, at(0s)), at(0s));  // the spent token is not given back
}

}  // namespace
}  // namespace ibat::core
