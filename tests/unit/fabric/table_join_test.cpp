// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableJoin: a PathRecord table query's two GetTables joined in either order, the switches
// cancelled when the paths fail, and the result with TableFallback's verdict from the port's
// SaTables. SaClient's tests (sa_client_table_test.cpp) run the same cases through MADs; these pin
// the object ibat-sim runs too.
#include <gtest/gtest.h>

#include "fabric/table_join.h"

namespace ibat::fabric {
namespace {

using Part = TableJoin::Part;

TEST(TableJoin, PathsFirstWaitForTheSwitchesAndLeaveThemOut) {
  const SaTables tables(true);
  TableJoin join(tables);
  EXPECT_TRUE(join.running(Part::paths));
  EXPECT_TRUE(join.running(Part::switches));
  EXPECT_FALSE(join.paths_ended(/*ok=*/true, /*timed_out=*/false)) << "nothing to cancel";
  EXPECT_FALSE(join.running(Part::paths));
  EXPECT_TRUE(join.running(Part::switches));
  EXPECT_FALSE(join.ended());
  join.switches_ended(/*answered=*/true, /*read=*/true);
  ASSERT_TRUE(join.ended());
  const TableJoin::Result r = join.result(tables);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.leave_out_switches);
  EXPECT_FALSE(r.verdict.tables_off);
}

TEST(TableJoin, SwitchesFirstWaitForThePaths) {
  const SaTables tables(true);
  TableJoin join(tables);
  join.switches_ended(true, true);
  EXPECT_FALSE(join.running(Part::switches));
  EXPECT_TRUE(join.running(Part::paths));
  EXPECT_FALSE(join.ended());
  EXPECT_FALSE(join.paths_ended(true, false));
  ASSERT_TRUE(join.ended());
  EXPECT_TRUE(join.result(tables).ok);
  EXPECT_TRUE(join.result(tables).leave_out_switches);
}

TEST(TableJoin, SwitchesUnansweredOrUnreadableLeaveEveryPath) {
  const SaTables tables(true);
  for (const bool answered : {false, true}) {
    TableJoin join(tables);
    join.switches_ended(answered, false);
    join.paths_ended(true, false);
    ASSERT_TRUE(join.ended());
    EXPECT_TRUE(join.result(tables).ok);
    EXPECT_FALSE(join.result(tables).leave_out_switches) << answered;
  }
}

TEST(TableJoin, APathFailureCancelsTheSwitchesAndEndsTheJoin) {
  SaTables tables(true);
  TableJoin join(tables);
  tables.on_sa_answer();  // a GET answered meanwhile: the SA answers, but not this table
  EXPECT_TRUE(join.paths_ended(/*ok=*/false, /*timed_out=*/true)) << "cancel the switches";
  EXPECT_FALSE(join.running(Part::switches));
  ASSERT_TRUE(join.ended());
  const TableJoin::Result r = join.result(tables);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.leave_out_switches);
  EXPECT_FALSE(r.verdict.sa_silent);
  EXPECT_TRUE(r.verdict.tables_off);
}

TEST(TableJoin, APathFailureAfterTheSwitchesEndedCancelsNothing) {
  // The SA answered only the switches' table beside it: busy, not refusing tables.
  SaTables tables(true);
  TableJoin join(tables);
  tables.on_sa_answer();
  join.switches_ended(true, true);
  EXPECT_FALSE(join.paths_ended(false, true));
  ASSERT_TRUE(join.ended());
  const TableJoin::Result r = join.result(tables);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.verdict.sa_silent);
  EXPECT_FALSE(r.verdict.tables_off);
}

TEST(TableJoin, ATimeoutWithNothingAnsweredLeavesTablesOn) {
  const SaTables tables(true);
  TableJoin join(tables);
  join.paths_ended(false, true);
  EXPECT_TRUE(join.result(tables).verdict.sa_silent);
  EXPECT_FALSE(join.result(tables).verdict.tables_off);
}

TEST(TableJoin, ARefusedTableTurnsTablesOffButNotOnceTheSmChanged) {
  SaTables tables(true);
  TableJoin join(tables);
  join.paths_ended(/*ok=*/false, /*timed_out=*/false);  // refused: its answer is the SA answering
  tables.on_sa_answer();
  EXPECT_TRUE(join.result(tables).verdict.tables_off);
  tables.on_sm_changed();
  EXPECT_FALSE(join.result(tables).verdict.tables_off) << "sent under the SM before";
}

}  // namespace
}  // namespace ibat::fabric
