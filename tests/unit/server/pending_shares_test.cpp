// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PendingShares: each uid's count of pending requests, refused past the share, back to nothing
// once every share taken is given back.
#include <gtest/gtest.h>

#include "server/daemon/pending_shares.h"

namespace ibat::server {
namespace {

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;

TEST(PendingShares, AUidIsRefusedPastItsShareAndAnotherHasItsOwn) {
  PendingShares shares(2);
  EXPECT_TRUE(shares.take(kAlice));
  EXPECT_TRUE(shares.take(kAlice));
  EXPECT_FALSE(shares.take(kAlice));
  EXPECT_EQ(shares.held(kAlice), 2u);  // a refusal takes nothing
  EXPECT_TRUE(shares.take(kBob));
  EXPECT_TRUE(shares.take(kBob));
  EXPECT_FALSE(shares.take(kBob));
  EXPECT_EQ(shares.total(), 4u);
  shares.give_back(kAlice);
  EXPECT_TRUE(shares.take(kAlice));  // one given back, one to take
}

TEST(PendingShares, EveryShareGivenBackLeavesNothing) {
  PendingShares shares(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(shares.take(kAlice));
  ASSERT_TRUE(shares.take(kBob));
  EXPECT_FALSE(shares.take(kAlice));
  EXPECT_EQ(shares.uids(), 2u);
  for (int i = 0; i < 3; ++i) shares.give_back(kAlice);
  shares.give_back(kBob);
  EXPECT_EQ(shares.total(), 0u);
  EXPECT_EQ(shares.uids(), 0u);  // no entry left behind for a uid that holds nothing
  EXPECT_EQ(shares.held(kAlice), 0u);
}

TEST(PendingShares, GivingBackWhatAUidDoesNotHoldChangesNothing) {
  PendingShares shares(1);
  ASSERT_TRUE(shares.take(kAlice));
  shares.give_back(kBob);
  EXPECT_EQ(shares.total(), 1u);
  EXPECT_EQ(shares.uids(), 1u);
  EXPECT_FALSE(shares.take(kAlice));
}

TEST(PendingShares, ALowerShareRefusesNewOnesUntilThePendingOnesDropBelowIt) {
  PendingShares shares(4);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(shares.take(kAlice));
  shares.set_limit(2);
  EXPECT_EQ(shares.held(kAlice), 3u);  // the pending ones stay
  EXPECT_FALSE(shares.take(kAlice));
  shares.give_back(kAlice);
  EXPECT_FALSE(shares.take(kAlice));  // 2 held: still at the share
  shares.give_back(kAlice);
  EXPECT_TRUE(shares.take(kAlice));
}

TEST(PendingShares, AUidWithSeveralSharesMayHoldThatManyTimesTheLimit) {
  PendingShares shares(2);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(shares.take(kAlice, 3));  // root or admin_group, admin_share 3
  EXPECT_FALSE(shares.take(kAlice, 3));
  EXPECT_FALSE(shares.take(kAlice, 1));  // one share's worth of room: none
  EXPECT_TRUE(shares.take(kBob, 1));
  EXPECT_TRUE(shares.take(kBob, 1));
  EXPECT_FALSE(shares.take(kBob, 1));
}

}  // namespace
}  // namespace ibat::server
