// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaTables: a port's GetTables off with a reason, reported once, back on at the next SM (not
// without RMPP), and the SM changes and SA answers a GetTable sent now is judged by. SaClient's
// tests (sa_client_table_test.cpp) run the same cases through MADs; these pin the object ibat-sim
// runs too.
#include <gtest/gtest.h>

#include "fabric/sa_tables.h"

namespace ibat::fabric {
namespace {

TEST(SaTables, AnswersAndSmChangesAreWhatATableIsJudgedBy) {
  SaTables tables(true);
  EXPECT_EQ(tables.sa_answers(), 0U);
  tables.on_sa_answer();
  tables.on_sa_answer();
  EXPECT_EQ(tables.sa_answers(), 2U);
  const TableFallback sent = tables.sent();
  EXPECT_TRUE(sent.failed(true, false, tables.sm_generation(), tables.sa_answers()).sa_silent) << "none since";
  tables.on_sa_answer();
  EXPECT_TRUE(sent.failed(true, false, tables.sm_generation(), tables.sa_answers()).tables_off) << "one since";
  tables.on_sm_changed();
  EXPECT_EQ(tables.sm_generation(), 1U);
  EXPECT_EQ(tables.sa_answers(), 3U) << "an SM change keeps the count";
  EXPECT_FALSE(sent.failed(true, false, tables.sm_generation(), tables.sa_answers()).tables_off);
}

TEST(SaTables, OffWithItsReasonReportedOnceAndBackOnAtTheNextSm) {
  SaTables tables(true);
  EXPECT_TRUE(tables.usable());
  EXPECT_TRUE(tables.turn_off("refused")) << "report it";
  EXPECT_FALSE(tables.usable());
  EXPECT_EQ(tables.off_reason(), "refused");
  EXPECT_FALSE(tables.turn_off("lost")) << "off already";
  EXPECT_EQ(tables.off_reason(), "refused");
  EXPECT_FALSE(tables.refuse()) << "reported when it went off";

  tables.on_sm_changed();
  EXPECT_TRUE(tables.usable());
  EXPECT_TRUE(tables.off_reason().empty());
  EXPECT_TRUE(tables.turn_off("lost"));
  EXPECT_EQ(tables.off_reason(), "lost");
}

TEST(SaTables, WithoutRmppOffFromTheStartAndAfterEverySmReportedOnce) {
  SaTables tables(false);
  EXPECT_FALSE(tables.usable());
  EXPECT_NE(tables.off_reason().find("no RMPP"), std::string::npos);
  EXPECT_TRUE(tables.refuse()) << "the first GetTable asked reports it";
  EXPECT_FALSE(tables.refuse());
  tables.on_sm_changed();
  EXPECT_FALSE(tables.usable()) << "no RMPP stays no RMPP";
  EXPECT_EQ(tables.sm_generation(), 1U);
  EXPECT_FALSE(tables.refuse()) << "reported once, not per SM";
  EXPECT_FALSE(tables.turn_off("refused"));
}

}  // namespace
}  // namespace ibat::fabric
