// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fair shares of the path cache among local users (docs/design.md §3 item 5): one user's misses
// push out the least recently used entries, but not the entries another user is using while that
// user holds no more than its share (capacity / users holding entries); alone, a user may fill it.
#include "test_support.h"

namespace ibat::core::testing {
namespace {

constexpr std::uint32_t kAlice = 1000;  // the one with many destinations
constexpr std::uint32_t kBob = 1001;

class ResolverCacheShareTest : public ResolverTest {
 protected:
  ResolverCacheShareTest() {
    policy.capacity = 100;
    policy.prefetch = Prefetch::off;
    policy.sa_adaptive = false;
    policy.sa_max_inflight = 1000;
    policy.sa_rate = 1e6;
    policy.sa_burst = 1000;
    reset();
  }
  static ResolveRequest by(std::uint32_t uid, bool cache_only = false) {
    ResolveRequest r;
    r.requester = uid;
    r.cache_only = cache_only;
    return r;
  }
  // `uid` resolves remote_gid(first .. first + n - 1), each answered by the SA.
  void resolve_answered(std::uint32_t uid, std::uint64_t first, std::uint64_t n) {
    for (std::uint64_t k = first; k < first + n; ++k) {
      resolve_gid(remote_gid(k), by(uid));
      const std::optional<PathQuery> q = sink.open_for(remote_gid(k));
      ASSERT_TRUE(q) << k;
      sink.open.erase(q->id);
      answer(*q, good_path(remote_gid(k), static_cast<std::uint16_t>(k)));
    }
  }
  // How many of remote_gid(first .. first + n - 1) `uid` finds in the cache.
  std::uint64_t cached(std::uint32_t uid, std::uint64_t first, std::uint64_t n) {
    std::uint64_t found = 0;
    for (std::uint64_t k = first; k < first + n; ++k) {
      const RequestId id = resolve_gid(remote_gid(k), by(uid, true));
      found += rec.last.at(id).error == Error::ok ? 1 : 0;
    }
    return found;
  }
};

TEST_F(ResolverCacheShareTest, AnotherUsersEntriesInUseSurviveOneUsersFlood) {
  resolve_answered(kBob, 1, 10);
  advance(1s);
  resolve_answered(kAlice, 1000, 500);
  EXPECT_EQ(resolver->stats().entries, 100u);  // the capacity holds
  EXPECT_EQ(cached(kBob, 1, 10), 10u);         // without the shares: 0, the flood pushed them all out
  EXPECT_EQ(cached(kAlice, 1000 + 500 - 90, 90), 90u);  // Alice keeps the rest: her latest 90
}

TEST_F(ResolverCacheShareTest, AloneAUserMayFillTheWholeCache) {
  resolve_answered(kAlice, 1000, 150);
  EXPECT_EQ(resolver->stats().entries, 100u);
  EXPECT_EQ(cached(kAlice, 1050, 100), 100u);
  EXPECT_EQ(resolver->stats().evictions, 50u);
}

TEST_F(ResolverCacheShareTest, EntriesAnotherUserNoLongerUsesAreAnyonesToPushOut) {
  resolve_answered(kBob, 1, 10);
  advance(61s);  // past the time an entry counts as in use
  resolve_answered(kAlice, 1000, 500);
  EXPECT_EQ(cached(kBob, 1, 10), 0u);
}

TEST_F(ResolverCacheShareTest, AUserBeyondItsShareGivesUpItsOldestEntriesInUse) {
  resolve_answered(kBob, 1, 80);  // in use, but 80 of 100 is more than half
  resolve_answered(kAlice, 1000, 30);
  EXPECT_EQ(resolver->stats().entries, 100u);
  EXPECT_EQ(cached(kAlice, 1000, 30), 30u);  // all of Alice's
  EXPECT_EQ(cached(kBob, 11, 70), 70u);      // Bob lost his 10 oldest
}

TEST_F(ResolverCacheShareTest, TheKernelIsAUserOfItsOwn) {
  for (std::uint64_t k = 1; k <= 10; ++k) {  // no requester: the kernel's local SA
    resolve_gid(remote_gid(k));
    const std::optional<PathQuery> q = sink.open_for(remote_gid(k));
    ASSERT_TRUE(q);
    sink.open.erase(q->id);
    answer(*q, good_path(remote_gid(k), static_cast<std::uint16_t>(k)));
  }
  resolve_answered(kAlice, 1000, 500);
  ResolveRequest kernel;
  kernel.cache_only = true;
  std::uint64_t found = 0;
  for (std::uint64_t k = 1; k <= 10; ++k) found += rec.last.at(resolve_gid(remote_gid(k), kernel)).error == Error::ok;
  EXPECT_EQ(found, 10u);
}

}  // namespace
}  // namespace ibat::core::testing
