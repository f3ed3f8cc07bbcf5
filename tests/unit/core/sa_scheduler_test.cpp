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

TEST(SaScheduler, RetriesComeDueInTimeOrder) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  EXPECT_EQ(s.retry_wakeup(), std::nullopt);
  s.retry_at(at(3s), 7);
  s.retry_at(at(1s), 8);
  EXPECT_EQ(s.retry_wakeup(), at(1s));
  EXPECT_EQ(s.due_retry(at(0s)), std::nullopt);
  const auto first = s.due_retry(at(5s));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->second, 8u);
  EXPECT_EQ(s.due_retry(at(5s))->second, 7u);
  EXPECT_EQ(s.due_retry(at(5s)), std::nullopt);
}

// Renewals go at revalidate_per_s, each gap in [0.5, 1.5] x the interval, none while a table is
// awaited (it may answer them all), from the draw within revalidate_jitter on.
TEST(SaScheduler, RevalidationsArePacedAndWaitForTheTable) {
  Policy p = bucket_only();
  p.revalidate_per_s = 10;  // 100 ms apart on average
  p.revalidate_jitter = 2s;
  SaScheduler s(p, at(0s), 1, 2);
  Prng prng(3);
  s.start_revalidations(at(10s), prng);
  const TimePoint first = *s.revalidation_wakeup(at(10s), true, false);
  EXPECT_GE(first, at(10s));
  EXPECT_LE(first, at(12s));
  EXPECT_FALSE(s.revalidation_due(first - 1ns));
  EXPECT_TRUE(s.revalidation_due(first));
  s.revalidation_asked(prng);
  const TimePoint second = *s.revalidation_wakeup(first, true, false);
  EXPECT_GE(second - first, 50ms);
  EXPECT_LE(second - first, 150ms);
  s.table().want(at(10s));
  EXPECT_FALSE(s.revalidation_due(second));
  EXPECT_EQ(s.revalidation_wakeup(second, true, false), std::nullopt);  // the table answers first
  s.table().drop();
  s.resume_revalidations(at(20s));  // no table comes: they go on from now
  EXPECT_EQ(s.revalidation_wakeup(at(20s), true, false), at(20s));
  EXPECT_EQ(s.revalidation_wakeup(at(20s), false, false), std::nullopt);  // nothing scheduled
}

// After a LID move the paths in use are set aside at the next tick, while the table is awaited,
// and go at this host's place in the in-use window; without a table, at once.
TEST(SaScheduler, PathsInUseGoAtTheirPlaceInTheWindow) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  s.table().learn_size(1000);
  s.in_use().on_lids_moved(at(10s), 0.5);
  s.in_use().found_in_use(64);
  s.set_aside_in_use_first(true);
  EXPECT_FALSE(s.set_aside_due());  // no table awaited: the schedule goes on as it is
  s.table().want(at(10s));
  EXPECT_TRUE(s.set_aside_due());
  EXPECT_EQ(s.revalidation_wakeup(at(10s), true, false), at(10s));
  s.set_aside_done();
  EXPECT_FALSE(s.set_aside_due());
  const TimePoint release = s.in_use_release_at();
  EXPECT_GT(release, at(10s));
  EXPECT_EQ(s.revalidation_wakeup(at(10s), false, true), release);
  EXPECT_FALSE(s.in_use_release_due(release - 1ns));
  EXPECT_TRUE(s.in_use_release_due(release));
  s.table().drop();
  EXPECT_TRUE(s.in_use_release_due(at(10s)));  // no table: at once
}

// A QoS class alone gets a table of its own, up to kMaxClassTables; a ServiceID none (by GET). Each
// table's queries carry its id space, so an answer finds its table and no GET's id names one.
// A table's gate counts all of its probe's round trip as queue, whatever base the port's estimate
// of the SA has learnt (a base learnt while every host starts may be a queue itself), and the
// probe is no sample of that estimate (docs/scale.md, appendix "The table gate and the port's
// estimate of the SA").
TEST(SaScheduler, AProbesGateJudgesItsWholeRoundTripAndTheEstimateIsTheGetsAlone) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  s.on_get_result(at(0s), at(0s) + 20ms, false);  // the SA answered a GET in 20 ms
  ASSERT_EQ(s.sa().base(), 20ms);
  s.table().want(at(1s));
  const SubnetTable::Step probe = s.table().step(at(1s), true, false, 0s, Gid{}, Pkey{0xFFFF});
  ASSERT_EQ(probe.send, SubnetTable::Send::probe);
  s.table().probe_sent(at(1s), true);
  EXPECT_EQ(s.on_probe_result(probe.id + 1, at(1s) + 30ms, false), std::nullopt);  // not the probe
  ASSERT_GT(30ms, kSaQueueTarget);
  EXPECT_EQ(s.on_probe_result(probe.id, at(1s) + 30ms, false), false);  // 10 ms over the base, 30 ms in all
  EXPECT_EQ(s.sa().srtt(), 20ms);                                       // no sample
  EXPECT_EQ(s.on_probe_result(probe.id, at(1s) + 40ms, false), std::nullopt);  // answered already
  const TimePoint next = *s.table().wakeup(at(1s) + 30ms, true, false);
  const SubnetTable::Step again = s.table().step(next, true, false, 0s, Gid{}, Pkey{0xFFFF});
  ASSERT_EQ(again.send, SubnetTable::Send::probe);
  s.table().probe_sent(next, true);
  EXPECT_EQ(s.on_probe_result(again.id, next + 1ms, false), true);  // a short round trip opens it
  EXPECT_EQ(s.sa().base(), 20ms);
}

TEST(SaScheduler, AProbeThatWaitedPastTheTargetInTheQueueHoldsItsTable) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  s.on_get_result(at(0s), at(0s) + 1ms, false);
  s.table().want(at(1s));
  const SubnetTable::Step probe = s.table().step(at(1s), true, false, 0s, Gid{}, Pkey{0xFFFF});
  ASSERT_EQ(probe.send, SubnetTable::Send::probe);
  s.table().probe_sent(at(1s), true);
  EXPECT_EQ(s.on_probe_result(probe.id, at(1s) + 1ms + kSaQueueTarget, false), false);
  EXPECT_TRUE(s.table().held());
}

TEST(SaScheduler, EachQosClassHasItsOwnTableAndItsQueriesFindIt) {
  SaScheduler s(bucket_only(), at(0s), 1, 2);
  QosKey gold;
  gold.qos_class = 4;
  gold.fields = QosKey::kQosClass;
  EXPECT_EQ(s.table_for(QosKey{}), &s.table());
  EXPECT_EQ(s.table_for(gold), nullptr);  // none before the class's first resolve
  SubnetTable* table = s.add_class_table(gold);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->qos_class(), std::optional<std::uint16_t>{4});
  EXPECT_EQ(s.table_for(gold), table);
  QosKey iser_gold = gold;
  iser_gold.service_id_lo = 0x1060CBC;
  iser_gold.fields |= QosKey::kServiceId;
  EXPECT_EQ(s.table_for(iser_gold), nullptr);
  EXPECT_EQ(s.add_class_table(iser_gold), nullptr);

  EXPECT_FALSE(s.tables_awaited());
  table->want(at(1s));
  EXPECT_TRUE(s.tables_awaited());  // the class's table holds the renewals back as the default's does
  const SubnetTable::Step step = table->step(at(1s), true, false, 0s, Gid{}, Pkey{0xFFFF});
  ASSERT_NE(step.send, SubnetTable::Send::nothing);
  EXPECT_EQ(s.table_of(step.id), table);
  s.table().want(at(1s));
  const SubnetTable::Step default_step = s.table().step(at(1s), true, false, 0s, Gid{}, Pkey{0xFFFF});
  ASSERT_NE(default_step.send, SubnetTable::Send::nothing);
  EXPECT_EQ(s.table_of(default_step.id), &s.table());
  EXPECT_NE(step.id, default_step.id);
  EXPECT_EQ(s.table_of(1), nullptr);  // a GET's id

  std::uint16_t next_class = 5;
  for (QosKey other = gold;; ++next_class) {
    other.qos_class = next_class;
    if (!s.add_class_table(other)) break;
  }
  EXPECT_EQ(next_class, 4 + SaScheduler::kMaxClassTables);  // the first class refused
  std::size_t tables = 0;
  s.for_each_table([&](const SubnetTable&) { ++tables; });
  EXPECT_EQ(tables, 1 + SaScheduler::kMaxClassTables);
}

}  // namespace
}  // namespace ibat::core
