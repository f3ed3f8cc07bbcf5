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
  // Starts again knowing the subnet's size: its tables are spread, and late GETs go at late_gap().
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

// Requests whose wait for the table ends go by GET, each host at its own late pace: 1.5 GETs a
// second (kLatePerHost) while the late share allows it, more in a small subnet (2,000 end ports:
// the share's floor, 250,000 x 0.1 / 6 / 2,000 = 2.08 a second) and less in a large one (20,000:
// its cap, 250,000 x 0.5 / 6 / 20,000 = 1.04 a second). The table gate's probe is never answered.
TEST_F(ResolverTableWaitTest, PastTheirWaitEachHostGoesAtItsLatePace) {
  for (const auto& [ports, gap] : {std::pair{2000u, 480ms}, std::pair{10000u, 667ms}, std::pair{20000u, 960ms}}) {
    SCOPED_TRACE(ports);
    sink.sent.clear();
    sink.probes = true;
    start_with_spread(ports);
    for (std::uint64_t i = 1; i <= 6; ++i) resolve_within(remote_gid(i), 16s);  // their wait ends at 1 s
    const TimePoint start = clock.now();
    std::vector<Duration> sent_at;
    while (sent_at.size() < 6 && clock.now() - start < 16s) {
      advance(10ms);
      while (sent_at.size() < sink.sent.size()) {
        const PathQuery q = sink.sent[sent_at.size()];
        sent_at.push_back(clock.now() - start);
        answer(q, good_path(*q.dgid, 100));
      }
    }
    ASSERT_TRUE(sink.tables_sent.empty()) << "no probe found the queue short";
    ASSERT_EQ(sent_at.size(), 6u);
    EXPECT_GE(sent_at[0], 1s - 10ms) << "held to the end of its wait";
    EXPECT_LE(sent_at[0], 1s + 10ms);
    for (std::size_t k = 1; k < sent_at.size(); ++k) {
      EXPECT_GE(sent_at[k] - sent_at[k - 1], gap - 10ms) << k;
      EXPECT_LE(sent_at[k] - sent_at[k - 1], gap + 10ms) << k;
    }
  }
}

// A probe that finds the SA's queue long says the table is not coming soon: the parked requests
// go by GET at once, at the late pace (667 ms at 10,000 end ports), the earliest deadline first,
// and new ones park no more while it holds the table.
TEST_F(ResolverTableWaitTest, ParkedRequestsGoLateOnceAProbeFindsTheQueueLong) {
  sink.probes = true;
  start_with_spread(10000);
  resolve_within(remote_gid(1), 60s);
  resolve_within(remote_gid(2), 50s);
  for (int i = 0; i < 1100 && sink.probes_sent.empty(); ++i) advance(10ms);  // within 10 s
  ASSERT_EQ(sink.probes_sent.size(), 1u);
  EXPECT_TRUE(sink.sent.empty()) << "parked while the probe is out";
  advance(1s);
  answer(sink.probes_sent[0], good_path(port_gid(), 1));  // it waited 1 s in the queue
  ASSERT_EQ(gets_for(remote_gid(2)), 1u) << "the earliest deadline at once";
  EXPECT_EQ(sink.sent.size(), 1u);
  answer(sink.sent.back(), good_path(remote_gid(2), 102));
  run_for(700ms, 10ms);
  EXPECT_EQ(gets_for(remote_gid(1)), 1u) << "the next a late gap later";
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  resolve_within(remote_gid(3), 60s);
  run_for(700ms, 10ms);
  EXPECT_EQ(gets_for(remote_gid(3)), 1u) << "a new request parks no more";
  EXPECT_TRUE(sink.tables_sent.empty());
}

TEST_F(ResolverTableWaitTest, ALateGetKeepsItsPaceWhenAWaiterJoinsOrItIsLost) {
  start_with_spread(3000);
  resolve_within(remote_gid(1), 20s);
  resolve_within(remote_gid(2), 20s);
  while (sink.sent.empty()) advance(10ms);
  const TimePoint first = clock.now();
  resolve_within(remote_gid(2), 20s);  // joins the late job: no promotion past the pace
  fail(sink.sent.back(), Error::timeout);  // its retry goes ahead of the late queue, at its pace
  std::vector<std::pair<Gid, Duration>> sent;
  while (sent.size() < 2 && clock.now() - first < 10s) {
    advance(10ms);
    while (sink.sent.size() > 1 + sent.size()) {
      const PathQuery q = sink.sent[1 + sent.size()];
      sent.emplace_back(*q.dgid, clock.now() - first);
      answer(q, good_path(*q.dgid, 100));
    }
  }
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].first, remote_gid(1)) << "the retry of the lost GET: its waiters have waited longest";
  EXPECT_GE(sent[0].second, 540ms);
  EXPECT_EQ(sent[1].first, remote_gid(2));
  EXPECT_GE(sent[1].second - sent[0].second, 540ms);
}

// Behind the other hosts' tables every answer is late (here 700 ms): the late GETs go at the late
// share's pace, several in flight, not at the SaPacer's pace of one query per round trip. A lost
// late GET hands them back to the pacer.
TEST_F(ResolverTableWaitTest, LateGetsKeepTheLatePaceWhenAnswersComeLateUntilOneIsLost) {
  start_with_spread(3000);
  for (std::uint64_t i = 1; i <= 8; ++i) resolve_within(remote_gid(i), 20s);
  const TimePoint start = clock.now();
  std::vector<std::pair<PathQuery, TimePoint>> open;  // sent, answered 700 ms later
  std::vector<Duration> sent_at;
  std::size_t most_in_flight = 0;
  while (sent_at.size() < 4 && clock.now() - start < 20s) {
    advance(10ms);
    while (sent_at.size() < sink.sent.size()) {
      open.emplace_back(sink.sent[sent_at.size()], clock.now());
      sent_at.push_back(clock.now() - start);
    }
    most_in_flight = std::max(most_in_flight, open.size());
    while (!open.empty() && clock.now() - open.front().second >= 700ms) {
      const PathQuery q = open.front().first;
      open.erase(open.begin());
      answer(q, good_path(*q.dgid, 100));
    }
  }
  ASSERT_EQ(sent_at.size(), 4u);
  for (std::size_t k = 1; k < sent_at.size(); ++k) EXPECT_LE(sent_at[k] - sent_at[k - 1], 680ms) << k;
  EXPECT_GE(most_in_flight, 2u);

  for (const auto& [q, at] : open) fail(q, Error::timeout);  // lost: the pacer holds them again
  open.clear();
  const std::size_t before = sink.sent.size();
  const TimePoint lost = clock.now();
  bool answered = false;
  while (!answered && clock.now() - lost < 20s) {
    advance(10ms);
    if (sink.sent.size() == before + 1 && open.empty()) open.emplace_back(sink.sent.back(), clock.now());
    ASSERT_LE(sink.sent.size(), before + 1) << "one in flight at a time while the first is unanswered";
    if (!open.empty() && clock.now() - open.front().second >= 700ms) {
      answer(open.front().first, good_path(*open.front().first.dgid, 100));
      answered = true;
    }
  }
  EXPECT_TRUE(answered);
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
