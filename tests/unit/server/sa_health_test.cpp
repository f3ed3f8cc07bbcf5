// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA silence in the daemon's log: one warning when queries start timing out, one line when the SA
// answers again (with how long it was silent), nothing for each further timeout or for cancels.
#include "server/daemon/sa_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using core::Error;

TEST(SaHealth, WarnsOnceWhileSilentAndSaysWhenTheSaIsBack) {
  SaHealth health;
  auto t0 = std::chrono::system_clock::time_point{} + 1'000'000'000s;  // 2001-09-09T01:46:40Z
  EXPECT_FALSE(health.on_result(Error::ok, t0));
  auto first = health.on_result(Error::timeout, t0 + 1s);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->warn);
  EXPECT_THAT(first->text, HasSubstr("SA not answering since 2001-09-09T01:46:41Z"));
  for (int i = 0; i < 84; ++i) EXPECT_FALSE(health.on_result(Error::timeout, t0 + 2s)) << "one line, not one per timeout";
  EXPECT_FALSE(health.on_result(Error::cancelled, t0 + 3s));
  auto back = health.on_result(Error::no_record, t0 + 31s);  // any answer means the SA is there
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->warn);
  EXPECT_EQ(back->text, "SA answering again after 30 s (85 queries timed out meanwhile)");
  EXPECT_FALSE(health.on_result(Error::ok, t0 + 32s));
  auto again = health.on_result(Error::timeout, t0 + 40s);
  ASSERT_TRUE(again);
  EXPECT_THAT(again->text, HasSubstr("since 2001-09-09T01:47:20Z"));
}

}  // namespace
}  // namespace ibat::server
