// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ReplyCeiling: the daemon's unread reply bytes, per uid and in total. Past a uid's share that
// uid's connection holding the most is named; past the ceiling, the connection holding the most of
// all; each victim's bytes leave the totals.
#include <gtest/gtest.h>

#include "server/daemon/reply_ceiling.h"

namespace ibat::server {
namespace {

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;
constexpr std::size_t kNoUidShare = 1u << 30;  // the tests of the ceiling alone

const Connection* conn(std::uintptr_t n) { return reinterpret_cast<const Connection*>(n * 16); }

const Connection* cut(ReplyCeiling& ceiling, uid_t uid, ReplyCeiling::Over over, std::uint32_t shares = 1) {
  const std::optional<ReplyCeiling::Victim> victim = ceiling.take_victim(uid, shares);
  if (!victim) return nullptr;
  EXPECT_EQ(victim->over, over);
  return victim->connection;
}

TEST(ReplyCeiling, UnderTheCeilingNobodyIsCut) {
  ReplyCeiling ceiling(100, kNoUidShare);
  ceiling.hold(conn(1), kAlice, 60);
  ceiling.hold(conn(2), kBob, 40);
  EXPECT_EQ(ceiling.total(), 100u);
  EXPECT_FALSE(ceiling.take_victim(kBob, 1));
  ceiling.hold(conn(1), kAlice, 10);  // a write went out
  EXPECT_EQ(ceiling.total(), 50u);
  EXPECT_EQ(ceiling.held_by(kAlice), 10u);
  ceiling.hold(conn(2), kBob, 0);  // closed, or everything written
  EXPECT_EQ(ceiling.total(), 10u);
  EXPECT_EQ(ceiling.held_by(kBob), 0u);
}

TEST(ReplyCeiling, OverItTheLargestHolderIsCutFirstAndOnlyAsManyAsNeeded) {
  ReplyCeiling ceiling(100, kNoUidShare);
  ceiling.hold(conn(1), kAlice, 30);
  ceiling.hold(conn(2), kBob, 50);
  ceiling.hold(conn(3), kAlice, 40);  // 120: over
  EXPECT_EQ(cut(ceiling, kAlice, ReplyCeiling::Over::ceiling), conn(2));  // whoever's it is
  EXPECT_EQ(ceiling.total(), 70u);
  EXPECT_EQ(ceiling.held_by(kBob), 0u);
  EXPECT_FALSE(ceiling.take_victim(kAlice, 1));  // under again: nobody else
  ceiling.hold(conn(2), kBob, 0);  // the cut connection closes: nothing changes
  EXPECT_EQ(ceiling.total(), 70u);
}

TEST(ReplyCeiling, ALowerLimitTakesEffectAtTheNextCheck) {
  ReplyCeiling ceiling(1000, kNoUidShare);
  ceiling.hold(conn(1), kAlice, 300);
  ceiling.hold(conn(2), kBob, 200);
  ceiling.set_limits(250, kNoUidShare);
  EXPECT_EQ(cut(ceiling, kBob, ReplyCeiling::Over::ceiling), conn(1));
  EXPECT_FALSE(ceiling.take_victim(kBob, 1));
  EXPECT_EQ(ceiling.total(), 200u);
}

// Bob's one slow reader holds more than any one of Alice's connections; with the ceiling alone it
// would be cut for what Alice's many hold together. Alice's share cuts her own largest first.
TEST(ReplyCeiling, PastAUidsShareThatUidsLargestIsCutNotAnotherUsersLargerOne) {
  ReplyCeiling ceiling(1000, 100);
  ceiling.hold(conn(9), kBob, 90);
  for (std::uintptr_t c = 1; c <= 3; ++c) ceiling.hold(conn(c), kAlice, 30 + c);  // 31, 32, 33
  EXPECT_FALSE(ceiling.take_victim(kAlice, 1));  // 96: within her share
  ceiling.hold(conn(4), kAlice, 20);             // 116
  EXPECT_EQ(cut(ceiling, kAlice, ReplyCeiling::Over::uid_share), conn(3));
  EXPECT_EQ(ceiling.held_by(kAlice), 83u);
  EXPECT_EQ(ceiling.held_by(kBob), 90u);
  EXPECT_EQ(ceiling.total(), 173u);
  EXPECT_FALSE(ceiling.take_victim(kAlice, 1));
}

TEST(ReplyCeiling, AUidWithSeveralSharesMayHoldThatManyTimesTheShare) {
  ReplyCeiling ceiling(1000, 100);
  ceiling.hold(conn(1), kAlice, 150);
  EXPECT_FALSE(ceiling.take_victim(kAlice, 2));
  ceiling.hold(conn(2), kAlice, 60);  // 210 > 2 x 100
  EXPECT_EQ(cut(ceiling, kAlice, ReplyCeiling::Over::uid_share, 2), conn(1));
  EXPECT_FALSE(ceiling.take_victim(kAlice, 1));  // 60 left: under even one share
}

}  // namespace
}  // namespace ibat::server
