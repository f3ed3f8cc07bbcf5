// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// UserCounters: per-uid counts of requests and connections, the top users reported one by one and
// every other uid summed, memory bounded past kTrackedUids distinct uids.
#include <gtest/gtest.h>

#include "server/daemon/user_counters.h"

namespace ibat::server {
namespace {

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;
constexpr uid_t kCarol = 1002;

TEST(UserCounters, TheUidsThatAskedTheMostComeFirstAndTheRestAreSummed) {
  UserCounters users;
  for (int i = 0; i < 3; ++i) users.on_resolve(kAlice);
  for (int i = 0; i < 5; ++i) users.on_resolve_refused(kBob);  // refused ones were asked too
  users.on_resolve(kCarol);
  users.on_connect(kCarol);
  users.on_connection_refused(kCarol);

  UserCounters::Top top = users.top(2);
  ASSERT_EQ(top.users.size(), 2u);
  EXPECT_EQ(top.users[0].first, kBob);
  EXPECT_EQ(top.users[0].second.resolves_refused, 5u);
  EXPECT_EQ(top.users[1].first, kAlice);
  EXPECT_EQ(top.users[1].second.resolves, 3u);
  EXPECT_EQ(top.other_uids, 1u);
  EXPECT_EQ(top.others.resolves, 1u);
  EXPECT_EQ(top.others.connections, 1u);
  EXPECT_EQ(top.others.connections_refused, 1u);
}

TEST(UserCounters, AConnectionClosedIsNoLongerOpen) {
  UserCounters users;
  users.on_connect(kAlice);
  users.on_connect(kAlice);
  users.on_disconnect(kAlice);
  EXPECT_EQ(users.top(1).users.at(0).second.connections, 1u);
  users.on_disconnect(kAlice);
  users.on_disconnect(kAlice);  // one more than opened: no underflow
  EXPECT_EQ(users.top(1).users.at(0).second.connections, 0u);
}

TEST(UserCounters, UidsPastTheBoundAreCountedTogetherAndNothingIsLost) {
  UserCounters users;
  const uid_t kMany = static_cast<uid_t>(UserCounters::kTrackedUids) + 10;
  for (uid_t uid = 0; uid < kMany; ++uid) {
    users.on_resolve(uid);
    users.on_connect(uid);
  }
  EXPECT_EQ(users.tracked(), UserCounters::kTrackedUids);
  UserCounters::Top top = users.top(UserCounters::kReportedUids);
  std::uint64_t resolves = top.others.resolves;
  for (const auto& [uid, counts] : top.users) resolves += counts.resolves;
  EXPECT_EQ(resolves, kMany);  // every request counted, the untracked uids' in others
  EXPECT_EQ(top.other_uids, UserCounters::kTrackedUids - UserCounters::kReportedUids);
  for (uid_t uid = 0; uid < kMany; ++uid) users.on_disconnect(uid);
  top = users.top(UserCounters::kReportedUids);
  std::uint64_t open = top.others.connections;
  for (const auto& [uid, counts] : top.users) open += counts.connections;
  EXPECT_EQ(open, 0u);  // the untracked uids' connections were taken back where they were counted
}

}  // namespace
}  // namespace ibat::server
