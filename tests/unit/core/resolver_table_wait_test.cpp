// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Requests that wait for the awaited GetTable (Resolver::Impl::park_for_table): a miss whose
// deadline leaves more than the reserve waits for the table rather than asking its own GET, and
// goes by GET once its deadline is near, the table has answered without it, or no table comes.
#include <cmath>

#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

class ResolverTableWaitTest : public ResolverFilledTest {
 protected:
  ResolverTableWaitTest() {
    sink.tables = true;
    reset();  // the first port report: the port's table is in flight from here on
  }
  RequestId resolve_within(const Gid& dgid, Duration timeout) {
    ResolveRequest r;
    r.timeout = timeout;
    return resolve_gid(dgid, r);
  }
  // Starts again knowing the subnet's size: its first probe is spread over its n x 1 ms.
  void start_with_spread(std::uint32_t ports) {
    policy.expected_subnet_ports = ports;
    sink.tables_sent.clear();
    reset();
  }
  const TableQuery& table() const { return sink.tables_sent.back(); }
  void answer_table(std::vector<PathRecord> paths) {
    resolver->on_table_result(table().id, TableResult{Error::ok, std::move(paths), ""});
  }
  std::size_t gets_for(const Gid& dgid) const {
    std::size_t n = 0;
    for (const PathQuery& q : sink.sent) n += q.dgid == dgid ? 1 : 0;
    return n;
  }
};

TEST_F(ResolverTableWaitTest, ARequestThatCanWaitIsAnsweredByTheTableWithoutAGet) {
  ASSERT_EQ(sink.tables_sent.size(), 1u);
  RequestId id = resolve_within(remote_gid(1), 60s);
  run_for(10s, 100ms);
  EXPECT_TRUE(sink.sent.empty()) << "it waits for the table";
  EXPECT_EQ(rec.times(id), 0);
  answer_table({good_path(remote_gid(1), 101), good_path(remote_gid(2), 102)});
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
  run_for(60s, 1s);
  EXPECT_TRUE(sink.sent.empty()) << "and no GET follows";
}

TEST_F(ResolverTableWaitTest, ARequestWithTheDefaultDeadlineAsksItsGetAtOnce) {
  RequestId id = resolve_gid(remote_gid(1));  // Policy::request_timeout, 5 s: less than the reserve
  EXPECT_EQ(gets_for(remote_gid(1)), 1u);
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  EXPECT_EQ(rec.last[id].error, Error::ok);
}

TEST_F(ResolverTableWaitTest, ATableThatDoesNotComeInTimeLeavesTheRequestItsGetBeforeTheDeadline) {
  RequestId id = resolve_within(remote_gid(1), 60s);
  const TimePoint start = clock.now();
  while (sink.sent.empty() && clock.now() - start < 60s) advance(100ms);
  ASSERT_EQ(gets_for(remote_gid(1)), 1u);
  EXPECT_GE(clock.now() - start, 60s - 15s);
  EXPECT_LE(clock.now() - start, 60s - 15s + 100ms);
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);
}

TEST_F(ResolverTableWaitTest, AnEarlierDeadlineJoiningBringsTheGetForward) {
  resolve_within(remote_gid(1), 60s);
  run_for(1s, 100ms);
  RequestId soon = resolve_within(remote_gid(1), 20s);  // its GET is due 5 s from now
  run_for(4900ms, 100ms);
  EXPECT_TRUE(sink.sent.empty());
  run_for(200ms, 100ms);
  ASSERT_EQ(gets_for(remote_gid(1)), 1u);
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  EXPECT_EQ(rec.last[soon].error, Error::ok);
  EXPECT_EQ(resolver->stats().coalesced, 1u);

  RequestId now = resolve_within(remote_gid(2), 60s);
  RequestId urgent = resolve_gid(remote_gid(2));  // 5 s: no time to wait, the GET goes at once
  EXPECT_EQ(gets_for(remote_gid(2)), 1u);
  answer(sink.sent.back(), good_path(remote_gid(2), 102));
  EXPECT_EQ(rec.last[now].error, Error::ok);
  EXPECT_EQ(rec.last[urgent].error, Error::ok);
}

TEST_F(ResolverTableWaitTest, WhatTheTableLacksGoesByGetAsSoonAsItIsIn) {
  RequestId id = resolve_within(remote_gid(3), 60s);
  answer_table({good_path(remote_gid(1), 101)});
  EXPECT_EQ(gets_for(remote_gid(3)), 1u) << "at once, not at the reserve";
  answer(sink.sent.back(), good_path(remote_gid(3), 103));
  EXPECT_EQ(rec.last[id].error, Error::ok);
}

TEST_F(ResolverTableWaitTest, ARefusedTableSendsTheWaitingRequestsAtOnce) {
  RequestId id = resolve_within(remote_gid(1), 60s);
  resolver->on_table_result(table().id, TableResult{Error::invalid, {}, "MAD status 0x000c"});
  EXPECT_EQ(gets_for(remote_gid(1)), 1u);
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  EXPECT_EQ(rec.last[id].error, Error::ok);
}

// A table lost to a silent SA is asked again after its backoff: the requests keep waiting for it
// (at most to their reserve), and an SM change asks a new table without sending them early.
TEST_F(ResolverTableWaitTest, ALostTableOrAnSmChangeKeepsThemWaitingForTheNextTable) {
  RequestId id = resolve_within(remote_gid(1), 60s);
  resolver->on_table_result(table().id, TableResult{Error::timeout, {}, "the SA never answered"});
  resolver->on_sm_changed();
  run_for(10s, 100ms);
  EXPECT_TRUE(sink.sent.empty());
  ASSERT_GE(sink.tables_sent.size(), 2u);
  answer_table({good_path(remote_gid(1), 101)});
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_TRUE(sink.sent.empty());
}

// A probe that finds the SA's queue long says the table is not coming soon: the parked requests
// go by GET, the earliest deadline first, each by its latest time (its deadline less the 15 s
// reserve) and no sooner than an even schedule to it, whatever the SaPacer says: behind the other
// hosts' tables every answer here takes 20 s, and the pacer would send one GET per round trip
// (ten in 200 s), so several are in flight past its window. New requests park no more: they join
// the schedule.
TEST_F(ResolverTableWaitTest, ParkedRequestsGoByTheirDeadlinesOnceAProbeFindsTheQueueLong) {
  sink.probes = true;
  start_with_spread(10000);
  const TimePoint start = clock.now();
  resolve_within(remote_gid(100), 50s);
  for (std::uint64_t i = 1; i <= 8; ++i) resolve_within(remote_gid(i), 60s);
  for (int i = 0; i < 1100 && sink.probes_sent.empty(); ++i) advance(10ms);  // within 10 s
  ASSERT_EQ(sink.probes_sent.size(), 1u);
  EXPECT_TRUE(sink.sent.empty()) << "parked while the probe is out";
  advance(1s);
  answer(sink.probes_sent[0], good_path(port_gid(), 1));  // it waited 1 s: the table is not coming soon
  const TimePoint held = clock.now();
  resolve_within(remote_gid(9), 60s);  // after the probe: into the schedule, not parked
  // The nine parked ones, the last due at start + 45 s: an even schedule of (start + 45 s - held)
  // / 9; the new one then by its own latest time, held + 45 s.
  const Duration gap = (start + 45s - held) / 9;
  std::vector<std::pair<PathQuery, TimePoint>> open;
  std::vector<Duration> sent_at;
  std::size_t most_in_flight = 0;
  while (sent_at.size() < 10 && clock.now() - start < 60s) {
    while (sent_at.size() < sink.sent.size()) {
      open.emplace_back(sink.sent[sent_at.size()], clock.now());
      sent_at.push_back(clock.now() - held);
    }
    most_in_flight = std::max(most_in_flight, open.size());
    while (!open.empty() && clock.now() - open.front().second >= 20s) {
      answer(open.front().first, good_path(*open.front().first.dgid, 100));
      open.erase(open.begin());
    }
    advance(10ms);
  }
  ASSERT_EQ(sent_at.size(), 10u);
  EXPECT_EQ(*sink.sent[0].dgid, remote_gid(100)) << "the earliest deadline first";
  EXPECT_LE(held + sent_at[0], start + 35s) << "by its latest time";
  for (std::size_t k = 0; k < 9; ++k) {
    const Duration since = k == 0 ? sent_at[0] : sent_at[k] - sent_at[k - 1];
    EXPECT_GE(since, gap - 20ms) << k << ": no sooner than the schedule";
    EXPECT_LE(since, gap + 20ms) << k;
  }
  EXPECT_LE(held + sent_at[8], start + 45s) << "the parked ones by their latest time";
  EXPECT_EQ(*sink.sent[9].dgid, remote_gid(9));
  EXPECT_GE(sent_at[9], 45s - 20ms) << "the new one no sooner than its own schedule";
  EXPECT_LE(sent_at[9], 45s + 20ms);
  EXPECT_GE(most_in_flight, 4u) << "past the pacer's window of one";
  EXPECT_TRUE(sink.tables_sent.empty());
}

// A waiter joining a late GET does not make it a waited one; a late GET lost goes again ahead of
// the late queue, its waiters having waited longest.
TEST_F(ResolverTableWaitTest, ALateGetStaysLateWhenAWaiterJoinsAndItsRetryGoesFirst) {
  sink.probes = true;
  start_with_spread(10000);
  resolve_within(remote_gid(1), 60s);
  for (int i = 0; i < 1100 && sink.probes_sent.empty(); ++i) advance(10ms);
  ASSERT_EQ(sink.probes_sent.size(), 1u);
  advance(1s);
  answer(sink.probes_sent[0], good_path(port_gid(), 1));  // held: remote 1 goes late, by its deadline
  while (sink.sent.empty()) advance(10ms);
  ASSERT_EQ(gets_for(remote_gid(1)), 1u);
  resolve_within(remote_gid(2), 60s);  // queued late behind nothing in flight of its own
  resolve_within(remote_gid(1), 60s);  // joins the late GET in flight: not sent again
  EXPECT_EQ(gets_for(remote_gid(1)), 1u);
  fail(sink.sent.front(), Error::timeout);  // lost: its retry goes ahead of remote 2
  const std::size_t before = sink.sent.size();
  while (sink.sent.size() == before) advance(10ms);
  EXPECT_EQ(*sink.sent[before].dgid, remote_gid(1)) << "the retry of the lost GET first";
}

TEST_F(ResolverTableWaitTest, WithoutPrefetchNothingWaits) {
  policy.prefetch = Prefetch::off;
  sink.tables_sent.clear();
  reset();
  resolve_within(remote_gid(1), 60s);
  EXPECT_EQ(gets_for(remote_gid(1)), 1u);
  EXPECT_TRUE(sink.tables_sent.empty());
}

}  // namespace
}  // namespace ibat::core::testing
