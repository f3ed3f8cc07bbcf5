// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaScheduler alone, with the jobs faked: the waited GETs go first, round robin among requesters;
// dead items are skipped; while a table is awaited a late GET goes by its deadline's schedule and
// not sooner, a background one may go meanwhile; the wake-up time is the one next_get() obeys.
#include <gtest/gtest.h>

#include <map>

#include "core/sa_scheduler.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;
using Item = SaScheduler::Item;

TimePoint at(Duration d) { return TimePoint{d}; }

// Jobs as the test sets them: each id's live seq and the first deadline of its waiters.
struct FakeJobs final : SaScheduler::Jobs {
  std::map<std::uint64_t, std::uint64_t> seq;  // live (job, seq); absent: dead
  std::map<std::uint64_t, TimePoint> deadline;
  bool live(const Item& item) const override {
    auto it = seq.find(item.first);
    return it != seq.end() && it->second == item.second;
  }
  std::optional<TimePoint> first_deadline(std::uint64_t id) const override {
    auto it = deadline.find(id);
    if (it == deadline.end()) return std::nullopt;
    return it->second;
  }
  std::size_t count() const override { return seq.size(); }
  Item add(std::uint64_t id) {
    seq[id] = 1;
    return {id, 1};
  }
};

Policy bucket_only() {
  Policy p;
  p.sa_adaptive = false;  // the window and bucket only: no pace to reason about here
  return p;
}

TEST(SaScheduler, WaitedGoesBeforeBackgroundAndDeadItemsAreSkipped) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  s.queue(Traffic::background, std::nullopt, jobs.add(1), false, at(0s), jobs);
  s.queue(Traffic::waited, 100, jobs.add(2), false, at(0s), jobs);
  s.queue(Traffic::waited, 100, jobs.add(3), false, at(0s), jobs);
  jobs.seq.erase(2);  // job 2 answered from elsewhere: its item is dead
  EXPECT_EQ(s.queued(), 3u);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 3u);
  EXPECT_EQ(s.next_get(at(0s), 1, jobs), 1u);
  EXPECT_EQ(s.next_get(at(0s), 2, jobs), std::nullopt);
  EXPECT_EQ(s.get_wakeup(at(0s), 2, jobs), std::nullopt);  // nothing queued
}

TEST(SaScheduler, WaitedGetsTakeTurnsAmongRequesters) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  for (std::uint64_t id = 1; id <= 3; ++id) s.queue(Traffic::waited, 100, jobs.add(id), false, at(0s), jobs);
  s.queue(Traffic::waited, 200, jobs.add(4), false, at(0s), jobs);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 1u);
  EXPECT_EQ(s.next_get(at(0s), 1, jobs), 4u);  // the other requester's turn
  EXPECT_EQ(s.next_get(at(0s), 2, jobs), 2u);
}

TEST(SaScheduler, TheInflightCapHoldsEveryGet) {
  Policy p = bucket_only();
  p.sa_max_inflight = 2;
  SaScheduler s(p, at(0s), 1, 2);
  FakeJobs jobs;
  s.queue(Traffic::waited, std::nullopt, jobs.add(1), false, at(0s), jobs);
  EXPECT_EQ(s.next_get(at(0s), 2, jobs), std::nullopt);
  EXPECT_EQ(s.get_wakeup(at(0s), 2, jobs), std::nullopt);  // not before a GET in flight ends
  EXPECT_EQ(s.next_get(at(0s), 1, jobs), 1u);
}

TEST(SaScheduler, ALateGetGoesByItsDeadlineWhileTheTableIsAwaited) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  s.table().want(at(0s));
  ASSERT_TRUE(s.table().awaited());
  // Its latest time is 20 s less the reserve: the one late GET is due then, not now.
  jobs.deadline[1] = at(20s) + SaScheduler::kTableWaitReserve;
  s.queue(Traffic::late, std::nullopt, jobs.add(1), false, at(0s), jobs);
  s.queue(Traffic::background, std::nullopt, jobs.add(2), false, at(0s), jobs);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 2u);  // the background one goes meanwhile
  EXPECT_EQ(s.next_get(at(0s), 1, jobs), std::nullopt);
  EXPECT_EQ(s.get_wakeup(at(0s), 1, jobs), at(20s));
  EXPECT_EQ(s.next_get(at(20s), 1, jobs), 1u);
}

TEST(SaScheduler, LateGetsAreSpreadEvenlyToTheirLatestTimes) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  s.table().want(at(0s));
  // Two late GETs latest at 10 s and 40 s: the schedule allows min(10 / 1, 40 / 2) = 10 s a GET.
  jobs.deadline[1] = at(10s) + SaScheduler::kTableWaitReserve;
  jobs.deadline[2] = at(40s) + SaScheduler::kTableWaitReserve;
  s.queue(Traffic::late, std::nullopt, jobs.add(1), false, at(0s), jobs);
  s.queue(Traffic::late, std::nullopt, jobs.add(2), false, at(0s), jobs);
  EXPECT_EQ(s.get_wakeup(at(0s), 0, jobs), at(10s));
  EXPECT_EQ(s.next_get(at(10s), 0, jobs), 1u);
  // The schedule starts again from the GET just sent: (40 - 10) / 1.
  EXPECT_EQ(s.get_wakeup(at(10s), 1, jobs), at(40s));
}

TEST(SaScheduler, WithoutATableALateGetGoesAsSoonAsTheRuleAllows) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  jobs.deadline[1] = at(60s);
  s.queue(Traffic::late, std::nullopt, jobs.add(1), false, at(0s), jobs);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 1u);
}

TEST(SaScheduler, AQueueOfDeadItemsIsSweptWithinItsBound) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  for (std::uint64_t i = 0; i < 200; ++i) {
    jobs.seq[7] = i;  // the same job re-queued: every earlier item is dead
    s.queue(Traffic::background, std::nullopt, {7, i}, false, at(0s), jobs);
  }
  EXPECT_LE(s.queued(), 2 * jobs.count() + 64 + 1);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 7u);
  EXPECT_EQ(s.next_get(at(0s), 1, jobs), std::nullopt);
}

TEST(SaScheduler, APromotedGetGoesWithTheWaitedOnes) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  FakeJobs jobs;
  s.queue(Traffic::background, std::nullopt, jobs.add(1), false, at(0s), jobs);
  s.queue(Traffic::background, std::nullopt, jobs.add(2), false, at(0s), jobs);
  s.promote(100, {2, 1}, jobs);
  EXPECT_EQ(s.next_get(at(0s), 0, jobs), 2u);
}

}  // namespace
}  // namespace ibat::core
