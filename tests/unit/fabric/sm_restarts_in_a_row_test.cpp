// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SM restarts in a row, a scripted SA and scripted time (no loop, no MADs): several SM changes, each
// while the last one's GetTables (SaTables, TableJoin) or port checks and refresh (PortMonitorLogic)
// are still running. GetTables come back on at every change, a table sent under an older SM never
// turns them off, and the monitor drops its subscriptions, checks and refreshes per change, the
// latest change's refresh winning; and SaClient over a fake transport, as ibatd runs them. What faults.table and faults.sm_restart show on the lab only
// through ibatd's log (docs/fabric.md, "What the unit tests show without a lab").
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "fabric/port_monitor_logic.h"
#include "fabric/sa_client.h"
#include "fabric/sa_tables.h"
#include "fabric/table_join.h"
#include "fake_sender.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

core::TimePoint at(core::Duration d) { return core::TimePoint{} + d; }

// How the scripted SA ends one PathRecord table query.
enum class Sa { refuses, silent };

// A port's tables as SaClient runs them: a failed table's verdict turns them off if it says so.
struct Port {
  SaTables tables{true};
  std::vector<TableJoin> queries;  // in the order sent

  std::size_t send() {
    queries.emplace_back(tables);
    return queries.size() - 1;
  }
  // Query `i`'s paths end as the SA scripted (its switches' GetTable cancelled, as SaClient does);
  // a refusal is an answer of the SA. Returns its verdict, applied.
  TableFallback::Verdict end(std::size_t i, Sa sa) {
    TableJoin& join = queries.at(i);
    if (sa == Sa::refuses) tables.on_sa_answer();
    EXPECT_TRUE(join.paths_ended(/*ok=*/false, /*timed_out=*/sa == Sa::silent)) << "the switches cancelled";
    EXPECT_TRUE(join.ended());
    const TableJoin::Result r = join.result(tables);
    EXPECT_FALSE(r.ok);
    if (r.verdict.tables_off) tables.turn_off("refused");
    return r.verdict;
  }
};

// Three SM changes, each while the tables sent under the SM before are still running: each
// change finds the port's tables on, and the old tables refused meanwhile leave them on.
TEST(SmRestartsInARow, TablesOfAnOlderSmNeverTurnOffTheNewOnes) {
  Port port;
  const std::size_t first = port.send();  // under SM 0
  port.tables.on_sm_changed();            // SM 1
  const std::size_t second = port.send();
  port.tables.on_sm_changed();            // SM 2
  const std::size_t third = port.send();
  port.tables.on_sm_changed();            // SM 3
  EXPECT_EQ(port.tables.sm_generation(), 3U);

  // The SA refuses the first two (sent under SMs 0 and 1): an answer each, but of an older SM.
  EXPECT_FALSE(port.end(first, Sa::refuses).tables_off);
  EXPECT_FALSE(port.end(second, Sa::refuses).tables_off);
  EXPECT_TRUE(port.tables.usable());
  // The third, sent under SM 2, times out: the SA answered the two refusals meanwhile, so under the
  // SM it went to it would have been a refusal too; under SM 3 it says nothing.
  const TableFallback::Verdict v = port.end(third, Sa::silent);
  EXPECT_FALSE(v.sa_silent) << "two answers since it went out";
  EXPECT_FALSE(v.tables_off);
  EXPECT_TRUE(port.tables.usable());

  // A table of SM 3 refused: off now, reported once, until SM 4.
  const std::size_t fourth = port.send();
  EXPECT_TRUE(port.end(fourth, Sa::refuses).tables_off);
  EXPECT_FALSE(port.tables.usable());
  EXPECT_FALSE(port.tables.refuse()) << "reported when they went off";
}

// Tables off under one SM, then two SM changes in a row: back on at the first; a refusal of a
// table of that SM, ending after the second change, leaves them on; one of the current SM does not.
TEST(SmRestartsInARow, TablesComeBackOnAtEachChange) {
  Port port;
  EXPECT_TRUE(port.end(port.send(), Sa::refuses).tables_off);
  ASSERT_FALSE(port.tables.usable());

  port.tables.on_sm_changed();
  EXPECT_TRUE(port.tables.usable()) << "the new SM may serve tables";
  const std::size_t under_first = port.send();
  port.tables.on_sm_changed();
  EXPECT_TRUE(port.tables.usable());
  const std::size_t under_second = port.send();
  EXPECT_FALSE(port.end(under_first, Sa::refuses).tables_off) << "sent under the SM before";
  EXPECT_TRUE(port.tables.usable());
  EXPECT_TRUE(port.end(under_second, Sa::refuses).tables_off);
  EXPECT_FALSE(port.tables.usable());
  EXPECT_EQ(port.tables.off_reason(), "refused");

  port.tables.on_sm_changed();
  EXPECT_TRUE(port.tables.usable()) << "and on again at the next";
}

// An SA silent to everything through the restarts (OpenSM sweeping after each): its tables time out
// and leave the tables on, whatever SM they were sent under.
TEST(SmRestartsInARow, TablesLostWhileTheSaSweepsLeaveTablesOn) {
  Port port;
  std::vector<std::size_t> sent;
  for (int change = 0; change < 3; ++change) {
    sent.push_back(port.send());
    port.tables.on_sm_changed();
  }
  sent.push_back(port.send());
  for (const std::size_t i : sent) {
    const TableFallback::Verdict v = port.end(i, Sa::silent);
    EXPECT_TRUE(v.sa_silent) << i;
    EXPECT_FALSE(v.tables_off) << i;
  }
  EXPECT_TRUE(port.tables.usable());
}

// The same through SaClient, answers handed over as the SA would send them: three PathRecord
// tables, each sent under its own SM, the SM changing after each; OpenSM refuses all three. The
// two of older SMs leave the tables on; the current SM's turns them off, reported once; the next
// SM turns them on again.
TEST(SmRestartsInARow, SaClientTurnsTablesOffOnlyForTheCurrentSmsRefusal) {
  constexpr core::Lid kSmLid{1};
  constexpr core::Pkey kPkey{0xFFFF};
  const core::Gid self = core::Gid::from_parts(0xfe80000000000000ULL, 0x10);
  asio::io_context loop;
  test::FakeSender sender;
  MadRequester requester{loop, sender, 17};
  SaClient sa{requester, RetryPolicy{5ms, 1, 0.25, 8}, TableOptions{100, true}};
  sa.set_sm(kSmLid, 0);
  std::vector<std::string> offs;
  sa.on_tables_off([&](const std::string& reason) { offs.push_back(reason); });
  std::vector<PathTable> tables;
  std::vector<OutgoingMad> path_requests;
  for (int sm = 0; sm < 3; ++sm) {
    if (sm > 0) sa.on_sm_changed();
    ASSERT_TRUE(sa.query_path_table(self, kPkey, [&](const PathTable& t) { tables.push_back(t); })) << sm;
    path_requests.push_back(sender.sent.back());  // NodeRecord first, then PathRecord
  }
  // Refused: unsupported method/attribute combination.
  const auto refuse = [&](int i) {
    requester.on_receive(test::table_answer(path_requests.at(i), mad::attr::kPathRecord, {}, 64, kSmLid, 0x000C));
  };
  refuse(0);
  refuse(1);
  ASSERT_EQ(tables.size(), 2U);
  EXPECT_EQ(tables[0].error, core::Error::invalid);
  EXPECT_TRUE(sa.tables_usable()) << "refusals of older SMs";
  EXPECT_TRUE(offs.empty());
  refuse(2);
  ASSERT_EQ(tables.size(), 3U);
  EXPECT_FALSE(sa.tables_usable());
  ASSERT_EQ(offs.size(), 1U);
  EXPECT_EQ(offs[0], tables[2].reason);
  EXPECT_FALSE(sa.query_path_table(self, kPkey, [&](const PathTable& t) { tables.push_back(t); }));
  EXPECT_EQ(offs.size(), 1U) << "reported once";
  sa.on_sm_changed();
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_EQ(requester.outstanding(), 0U) << "each refusal cancelled its switches' GetTable";
}

// fabric.poll_interval_ms 1 s, sm_check_interval_s 60, mad_timeout 200 ms, sm_refresh_spread 2 s.
MonitorSettings settings(bool port_events) { return MonitorSettings::of(1s, 60s, 200ms, 2s, port_events); }

// A monitor that found the SM MASTER at 0 and holds both trap subscriptions.
PortMonitorLogic settled(bool port_events) {
  PortMonitorLogic logic(settings(port_events), 5);
  logic.start(at(0s));
  EXPECT_EQ(logic.begin_check(at(0s), true), CheckMad::sm_info);
  EXPECT_EQ(logic.sm_info_answered(at(0s), true), CheckMad::none);
  logic.subscription_confirmed();
  logic.subscription_confirmed();
  return logic;
}

// Without HCA events (ibsim, the lab): each change, as the poll's check tells it, is followed by a
// full check at the next poll and a refresh at once; three changes a poll apart, three of each. The
// refresh re-subscribes, and until both subscriptions are confirmed a check asks SMInfo alone.
TEST(SmRestartsInARow, EachChangeOneFullCheckAndOneRefreshWithoutHcaEvents) {
  PortMonitorLogic logic = settled(false);
  std::mt19937_64 rng(3);
  int refreshes = 0;
  core::TimePoint now = at(10s);
  for (int change = 0; change < 3; ++change) {
    // The poll's check ended (the detector then saw a new SM): the change, and its refresh at once.
    const core::TimePoint refresh = logic.sm_changed(now, rng);
    EXPECT_EQ(refresh, now);
    if (logic.take_refresh(now)) ++refreshes;
    EXPECT_FALSE(logic.take_refresh(now)) << "once";
    // The next poll: a full check of the new SM. Only one subscription confirmed before the next
    // change: the check asks SMInfo, not the subscription the new SA may not hold.
    logic.subscription_confirmed();
    now += 1s;
    EXPECT_EQ(logic.begin_check(now, true), CheckMad::sm_info) << change;
    EXPECT_EQ(logic.check(), SmCheck::full) << change;
    EXPECT_EQ(logic.sm_info_answered(now, true), CheckMad::none) << change;
  }
  EXPECT_EQ(refreshes, 3);
  // Settled at last: both confirmed, the next check is the routine one, to the SA.
  logic.subscription_confirmed();
  const core::TimePoint routine = logic.next_check_due();
  EXPECT_GE(routine, now + 60s);
  EXPECT_EQ(logic.begin_check(routine, true), CheckMad::subscription);
}

// With HCA events (CLIENT_REREGISTER at each restart), three changes 300 ms apart, each while the
// last one's full check is still waiting for SMInfo and its refresh is still to come: every change
// drops the subscriptions, only the latest change's refresh goes, once, and the check that was
// running ends on its answer without asking the subscription the new SA does not hold.
TEST(SmRestartsInARow, TheLatestChangesRefreshWinsAndARunningCheckAsksNoSubscription) {
  std::mt19937_64 rng(11);
  for (int run = 0; run < 50; ++run) {
    PortMonitorLogic logic = settled(true);
    core::TimePoint now = at(20s);
    std::vector<core::TimePoint> refresh_at;
    for (int change = 0; change < 3; ++change) {
      logic.suspect();  // the HCA event
      refresh_at.push_back(logic.sm_changed(now, rng));
      EXPECT_GE(refresh_at.back(), now);
      EXPECT_LT(refresh_at.back(), now + 2s);
      if (change == 0) {
        EXPECT_EQ(logic.begin_check(now, true), CheckMad::sm_info);  // the poll the event starts
        EXPECT_EQ(logic.check(), SmCheck::full);
      }
      now += 300ms;
    }
    // The check begun at the first change hears MASTER now: nothing confirmed at the new SA.
    EXPECT_EQ(logic.sm_info_answered(now, true), CheckMad::none) << run;
    // Every refresh timer fires in its turn; only the latest change's refresh is taken.
    std::vector<core::TimePoint> fired = refresh_at;
    std::sort(fired.begin(), fired.end());
    std::vector<core::TimePoint> taken;
    for (const core::TimePoint t : fired) {
      if (logic.take_refresh(t)) taken.push_back(t);
    }
    ASSERT_EQ(taken.size(), 1U) << run;
    EXPECT_EQ(taken[0], refresh_at.back()) << run;
  }
}

}  // namespace
}  // namespace ibat::fabric
