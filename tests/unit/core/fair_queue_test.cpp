// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// FairQueue: per-requester FIFOs served round robin, dead items dropped lazily, no entry left for
// a requester with nothing queued.
#include <gtest/gtest.h>

#include <set>

#include "core/fair_queue.h"

namespace ibat::core {
namespace {

const FairQueue::Live kAllLive = [](const FairQueue::Item&) { return true; };

TEST(FairQueue, OneRequesterIsPlainFifo) {
  FairQueue q;
  for (std::uint64_t j = 1; j <= 5; ++j) q.push_back(std::nullopt, {j, 1});
  for (std::uint64_t j = 1; j <= 5; ++j) {
    ASSERT_TRUE(q.live_front(kAllLive));
    EXPECT_EQ(q.pop_front().first, j);
  }
  EXPECT_FALSE(q.live_front(kAllLive));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.requesters(), 0u);
}

TEST(FairQueue, ALateRequesterWaitsOneItemOfABigOne) {
  FairQueue q;
  for (std::uint64_t j = 1; j <= 1000; ++j) q.push_back(1000u, {j, 1});
  ASSERT_TRUE(q.live_front(kAllLive));
  EXPECT_EQ(q.pop_front().first, 1u);
  q.push_back(1001u, {5000, 1});
  q.push_back(std::nullopt, {6000, 1});  // the kernel: a requester of its own
  std::vector<std::uint64_t> order;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(q.live_front(kAllLive));
    order.push_back(q.pop_front().first);
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{2, 5000, 6000, 3, 4, 5}));
  EXPECT_EQ(q.requesters(), 1u);  // the ones served out left no entry
  EXPECT_EQ(q.size(), 995u);
}

TEST(FairQueue, PushFrontGoesAheadOfItsOwnRequesterOnly) {
  FairQueue q;
  q.push_back(1u, {1, 1});
  q.push_back(2u, {2, 1});
  q.push_front(1u, {3, 1});  // a retry of requester 1
  std::vector<std::uint64_t> order;
  while (q.live_front(kAllLive)) order.push_back(q.pop_front().first);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{3, 2, 1}));
}

TEST(FairQueue, DeadItemsAreSkippedAndARequesterLeftEmptyPassesItsTurn) {
  FairQueue q;
  q.push_back(1u, {1, 1});
  q.push_back(1u, {2, 1});
  q.push_back(2u, {3, 1});
  std::set<std::uint64_t> dead{1, 2};
  const FairQueue::Live live = [&](const FairQueue::Item& item) { return !dead.contains(item.first); };
  ASSERT_TRUE(q.live_front(live));
  EXPECT_EQ(q.requesters(), 1u);
  EXPECT_EQ(q.pop_front().first, 3u);
  EXPECT_FALSE(q.live_front(live));
  EXPECT_TRUE(q.empty());
}

TEST(FairQueue, CompactDropsDeadItemsAndEmptyRequesters) {
  FairQueue q;
  for (std::uint64_t j = 1; j <= 10; ++j) q.push_back(static_cast<std::uint32_t>(j % 3), {j, 1});
  q.push_back(7u, {11, 1});
  const FairQueue::Live live = [](const FairQueue::Item& item) { return item.first % 3 != 0 && item.first != 11; };
  q.compact(live);
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(q.requesters(), 2u);
  std::vector<std::uint64_t> order;
  while (q.live_front(live)) order.push_back(q.pop_front().first);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 2, 4, 5, 7, 8, 10}));
}

// A requester with nothing queued waits one item of each requester queued before it, however
// long their queues: the most items taken ahead of such a lone item is the measure of that.
TEST(FairQueue, ALoneItemWaitsAtMostOneItemOfEachRequesterAheadAndTheMaximumSaysSo) {
  FairQueue q;
  for (std::uint64_t j = 1; j <= 1000; ++j) q.push_back(1000u, {j, 1});
  for (std::uint64_t j = 1; j <= 1000; ++j) q.push_back(1001u, {2000 + j, 1});
  ASSERT_TRUE(q.live_front(kAllLive));
  q.pop_front();                     // 1000's first: it came alone, taken at once
  EXPECT_EQ(q.lone_wait_max(), 0u);
  for (int second = 0; second < 10; ++second) {
    q.push_back(7u, {9000u + second, 1});  // user 7's one miss a second
    std::uint64_t taken = 0;
    for (;;) {
      ASSERT_TRUE(q.live_front(kAllLive));
      ++taken;
      if (q.pop_front().first == 9000u + second) break;
    }
    EXPECT_LE(taken, 3u);  // at most one of 1000's and one of 1001's first
  }
  EXPECT_EQ(q.lone_wait_max(), 2u);
  q.push_back(8u, {7000, 1});
  q.push_back(8u, {7001, 1});        // 8's second item is not a lone one
  while (q.live_front(kAllLive)) q.pop_front();
  EXPECT_EQ(q.lone_wait_max(), 2u);  // 8's first waited for one of each; the rest were not alone
}

TEST(FairQueue, AnItemThatDiesIsNotMeasuredNorTheOneBehindIt) {
  FairQueue q;
  for (std::uint64_t j = 1; j <= 5; ++j) q.push_back(1u, {j, 1});
  q.push_back(2u, {100, 1});
  q.push_back(2u, {101, 1});
  std::set<std::uint64_t> dead{100};
  const FairQueue::Live live = [&](const FairQueue::Item& item) { return !dead.contains(item.first); };
  for (int i = 0; i < 3; ++i) {  // 1, then 2's 100 is dropped and 101 taken, then 2
    ASSERT_TRUE(q.live_front(live));
    q.pop_front();
  }
  EXPECT_EQ(q.lone_wait_max(), 0u);  // 1's first went at once; 2's lone item died
}

}  // namespace
}  // namespace ibat::core
