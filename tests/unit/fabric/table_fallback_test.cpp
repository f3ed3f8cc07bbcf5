// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableFallback: which failed PathRecord GetTables turn a port's GetTables off until the next SM.
// SaClient's own tests (sa_client_table_test.cpp) run the same cases through MADs; these pin the
// rule that ibat-sim calls too.
#include <gtest/gtest.h>

#include "fabric/table_fallback.h"

namespace ibat::fabric {
namespace {

constexpr std::uint64_t kSm = 3;        // the SM generation it was sent under
constexpr std::uint64_t kAnswers = 40;  // the SA's answers to the port by then
const TableFallback kSent(kSm, kAnswers);

TEST(TableFallback, RefusedUnderTheSameSmTurnsTablesOff) {
  const auto v = kSent.failed(/*timed_out=*/false, /*switches_answered=*/true, kSm, kAnswers + 1);
  EXPECT_FALSE(v.sa_silent);
  EXPECT_TRUE(v.tables_off);
}

TEST(TableFallback, TimedOutWhileTheSaAnsweredOtherQueriesTurnsTablesOff) {
  const auto v = kSent.failed(true, true, kSm, kAnswers + 2);  // its NodeRecord table and a GET
  EXPECT_FALSE(v.sa_silent);
  EXPECT_TRUE(v.tables_off);
  EXPECT_TRUE(kSent.failed(true, false, kSm, kAnswers + 1).tables_off);  // a GET, no NodeRecord answer
}

TEST(TableFallback, TimedOutWithOnlyItsOwnNodeRecordAnswerMeansBusyNotRefusing) {
  const auto v = kSent.failed(true, true, kSm, kAnswers + 1);
  EXPECT_TRUE(v.sa_silent);
  EXPECT_FALSE(v.tables_off);
}

TEST(TableFallback, TimedOutWithNothingAnsweredMeansDownOrSweeping) {
  const auto v = kSent.failed(true, false, kSm, kAnswers);
  EXPECT_TRUE(v.sa_silent);
  EXPECT_FALSE(v.tables_off);
}

TEST(TableFallback, AFailureUnderAnEarlierSmSaysNothingOfTheNewOne) {
  EXPECT_FALSE(kSent.failed(false, true, kSm + 1, kAnswers + 5).tables_off);
  EXPECT_FALSE(kSent.failed(true, false, kSm + 1, kAnswers + 5).tables_off);
}

}  // namespace
}  // namespace ibat::fabric
