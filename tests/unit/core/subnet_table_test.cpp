// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SubnetTable: the subnet GetTable's life alone: size query first when a window needs an unknown
// size, then probes until the gate opens, then the table; wants cancel what is in flight, answers
// are matched by id, a lost table is asked again at the caller's time, a sink that cannot probe
// lets the table go at once.
#include <gtest/gtest.h>

#include "core/subnet_table.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;
using Send = SubnetTable::Send;

TimePoint at(Duration d) { return TimePoint{d}; }
const Gid kGid = Gid::from_parts(0xfe80'0000'0000'0000ULL, 0x0002'c903'0000'0001ULL);
const Pkey kPkey{0xFFFF};

SubnetTable::Step step(SubnetTable& t, TimePoint now, bool port_ready = true, bool needs_size = false,
                       Duration hold = 0s) {
  return t.step(now, port_ready, needs_size, hold, kGid, kPkey);
}

TEST(SubnetTable, IdleSendsNothing) {
  SubnetTable t(1, 0);
  EXPECT_EQ(t.state(), TableState::idle);
  EXPECT_FALSE(t.awaited());
  EXPECT_EQ(step(t, at(1s)).send, Send::nothing);
  EXPECT_FALSE(t.wakeup(at(1s), true, false));
}

TEST(SubnetTable, WaitsForAUsablePort) {
  SubnetTable t(1, 0);
  EXPECT_TRUE(t.want(at(1s)).empty());
  EXPECT_TRUE(t.awaited());
  EXPECT_EQ(step(t, at(1s), /*port_ready=*/false).send, Send::nothing);
  EXPECT_FALSE(t.wakeup(at(1s), false, false));
  EXPECT_EQ(t.wakeup(at(1s), true, false), at(1s));
}

TEST(SubnetTable, SizeFirstThenProbeThenTable) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  const auto size = step(t, at(1s), true, /*needs_size=*/true);
  ASSERT_EQ(size.send, Send::size_query);
  EXPECT_TRUE(t.asking_size(size.id));
  EXPECT_EQ(step(t, at(1s), true, true).send, Send::nothing);  // one size query at a time
  EXPECT_FALSE(t.wakeup(at(1s), true, true));
  ASSERT_TRUE(t.on_size_result(size.id, SubnetTable::SizeOutcome::answered, 500, TimePoint{}));
  EXPECT_EQ(t.subnet_size(), 500u);
  EXPECT_FALSE(t.size_wanted(true));

  // The next step arms the gate: the first probe is spread over the subnet's window (500 x
  // kProbeSlot), so it may not be due yet.
  EXPECT_EQ(t.wakeup(at(1s), true, true), at(1s));
  auto probe = step(t, at(1s), true, true);
  TimePoint due = at(1s);
  if (probe.send == Send::nothing) {
    due = *t.wakeup(at(1s), true, true);
    EXPECT_GT(due, at(1s));
    EXPECT_LE(due, at(1s) + 500 * TableGate::kProbeSlot);
    EXPECT_EQ(step(t, due - 1ns, true, true).send, Send::nothing);
    probe = step(t, due, true, true);
  }
  ASSERT_EQ(probe.send, Send::probe);
  EXPECT_EQ(t.state(), TableState::probing);
  t.probe_sent(due, true);
  EXPECT_EQ(step(t, due, true, true).send, Send::nothing);  // one probe at a time
  EXPECT_EQ(t.on_probe_result(probe.id + 1, due + 1ms, false, 1ms), std::nullopt);  // not ours
  EXPECT_EQ(t.on_probe_result(probe.id, due + 1ms, false, 1ms), true);                // short queue: open
  const auto table = step(t, due + 1ms, true, true);
  ASSERT_EQ(table.send, Send::table);
  EXPECT_EQ(t.state(), TableState::in_flight);
  EXPECT_EQ(t.sent().id, table.id);
  EXPECT_EQ(t.sent().sgid, kGid);
  EXPECT_EQ(t.sent_at(), due + 1ms);
  EXPECT_NE(table.id, probe.id);
  EXPECT_NE(table.id, size.id);
  EXPECT_TRUE(t.on_table_answered(table.id, 480));
  EXPECT_EQ(t.state(), TableState::idle);
  EXPECT_EQ(t.subnet_size(), 480u);  // what the table named
}

TEST(SubnetTable, AProbeThatFindsALongQueueHoldsTheTable) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  const auto probe = step(t, at(1s));
  ASSERT_EQ(probe.send, Send::probe);
  t.probe_sent(at(1s), true);
  const TimePoint answered = at(1s) + kSaQueueTarget + 100ms;
  EXPECT_EQ(t.probe_sent_at(probe.id), at(1s));
  EXPECT_EQ(t.on_probe_result(probe.id, answered, false, answered - at(1s)), false);
  EXPECT_TRUE(t.held());
  EXPECT_EQ(t.state(), TableState::wanted);
  const TimePoint next = *t.wakeup(answered, true, false);
  EXPECT_GE(next, answered + (kSaQueueTarget + 100ms) / 2);  // the next probe waits for the queue to drain
  EXPECT_EQ(step(t, answered).send, Send::nothing);
  EXPECT_EQ(step(t, next).send, Send::probe);
}

TEST(SubnetTable, ASinkThatCannotProbeLetsTheTableGoAtOnce) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  const auto probe = step(t, at(1s));
  ASSERT_EQ(probe.send, Send::probe);
  t.probe_sent(at(1s), false);
  EXPECT_EQ(t.on_probe_result(probe.id, at(1s), false, 0ms), std::nullopt);  // never sent: no answer expected
  EXPECT_EQ(step(t, at(1s)).send, Send::table);
}

TEST(SubnetTable, ANewWantCancelsWhatIsInFlightAndIgnoresItsAnswer) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  const auto probe = step(t, at(1s));
  t.probe_sent(at(1s), false);
  const auto table = step(t, at(1s));
  ASSERT_EQ(table.send, Send::table);
  const std::vector<QueryId> cancelled = t.want(at(2s));
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled.front(), table.id);
  EXPECT_EQ(t.wanted_at(), at(2s));
  EXPECT_FALSE(t.on_table_answered(table.id, 10));  // asked before the new want
  EXPECT_EQ(t.state(), TableState::wanted);
  // A probe in flight is cancelled too.
  const auto probe2 = step(t, at(2s));
  ASSERT_EQ(probe2.send, Send::probe);
  EXPECT_NE(probe2.id, probe.id);
  t.probe_sent(at(2s), true);
  EXPECT_EQ(t.drop(), std::vector<QueryId>{probe2.id});
  EXPECT_EQ(t.on_probe_result(probe2.id, at(2s), false, 0ms), std::nullopt);
  EXPECT_EQ(t.state(), TableState::idle);
}

TEST(SubnetTable, ALostTableIsAskedAgainAtTheCallersTime) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  ASSERT_EQ(step(t, at(1s)).send, Send::probe);
  t.probe_sent(at(1s), false);
  const auto table = step(t, at(1s));
  ASSERT_EQ(table.send, Send::table);
  ASSERT_TRUE(t.on_table_failed(table.id, at(5s)));
  EXPECT_EQ(t.table_attempts(), 1u);
  EXPECT_EQ(t.state(), TableState::wanted);
  EXPECT_EQ(t.wanted_at(), at(1s));  // the same want: its hold counts from then
  // The gate is armed again from the retry time: its first probe is not before it.
  EXPECT_EQ(step(t, at(4s)).send, Send::nothing);
  EXPECT_EQ(step(t, at(5s)).send, Send::probe);
  t.probe_sent(at(5s), false);
  const auto again = step(t, at(5s));
  ASSERT_EQ(again.send, Send::table);
  ASSERT_TRUE(t.on_table_failed(again.id, std::nullopt));  // out of retries
  EXPECT_EQ(t.state(), TableState::idle);
  EXPECT_FALSE(t.awaited());
}

TEST(SubnetTable, TheHoldAfterALidMoveDelaysTheFirstProbe) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  EXPECT_EQ(step(t, at(1s), true, false, /*hold=*/3s).send, Send::nothing);
  EXPECT_EQ(t.wakeup(at(1s), true, false), at(4s));
  EXPECT_EQ(step(t, at(4s), true, false, 3s).send, Send::probe);
}

TEST(SubnetTable, ASizeNobodyAnswersIsSettledAndNotAskedAgain) {
  SubnetTable t(1, 0);
  t.want(at(1s));
  const auto size = step(t, at(1s), true, true);
  ASSERT_EQ(size.send, Send::size_query);
  ASSERT_TRUE(t.on_size_result(size.id, SubnetTable::SizeOutcome::retry, 0, at(3s)));
  EXPECT_EQ(t.size_attempts(), 1u);
  EXPECT_EQ(step(t, at(2s), true, true).send, Send::nothing);  // the retry waits
  const auto again = step(t, at(3s), true, true);
  ASSERT_EQ(again.send, Send::size_query);
  ASSERT_TRUE(t.on_size_result(again.id, SubnetTable::SizeOutcome::settled, 0, TimePoint{}));
  EXPECT_FALSE(t.size_wanted(true));
  EXPECT_EQ(t.subnet_size(), 0u);
  EXPECT_EQ(step(t, at(3s), true, true).send, Send::probe);  // unspread: at once
  EXPECT_FALSE(t.on_size_result(again.id, SubnetTable::SizeOutcome::answered, 9, TimePoint{}));  // stale
}

TEST(SubnetTable, AKnownSizeIsNeverAsked) {
  SubnetTable t(1, 100);
  t.want(at(1s));
  EXPECT_FALSE(t.size_wanted(true));
  EXPECT_NE(step(t, at(1s) + 100 * TableGate::kProbeSlot, true, true).send, Send::size_query);
  t.learn_size(50);
  EXPECT_EQ(t.subnet_size(), 100u);  // the largest seen
}

}  // namespace
}  // namespace ibat::core
