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

}  // namespace
}  // namespace ibat::core
