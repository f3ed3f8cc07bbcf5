// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fair SA queueing among local users (docs/design.md §3 item 5): the waited GETs go round robin
// among the requesters with misses queued, so one user's many misses delay another's one miss by
// at most one GET each, and the kernel (no requester) is a requester of its own.
#include "test_support.h"

namespace ibat::core::testing {
namespace {

class ResolverFairTest : public ResolverTest {
 protected:
  ResolverFairTest() {
    policy.sa_max_inflight = 2;
    policy.sa_adaptive = false;  // the cap alone
    policy.prefetch = Prefetch::off;
    policy.request_timeout = 60s;
    reset();
  }
  // Answers the oldest open GET: one slot frees, the next queued GET goes.
  void answer_oldest() {
    for (int i = 0; i < 1000 && sink.open.empty(); ++i) advance(1ms);  // the token bucket refills
    ASSERT_FALSE(sink.open.empty());
    const QueryId id = *sink.open.begin();
    sink.open.erase(id);
    answer(sink.sent[id - 1], good_path(*sink.sent[id - 1].dgid, 10));
  }
  static ResolveRequest by(std::uint32_t uid) {
    ResolveRequest r;
    r.requester = uid;
    return r;
  }
  // How many GETs go before the one for `dgid`, answering one at a time (at most `limit`).
  int sends_until(const Gid& dgid, int limit) {
    const std::size_t from = sink.sent.size();
    for (int n = 0; n < limit; ++n) {
      answer_oldest();
      for (std::size_t i = from; i < sink.sent.size(); ++i)
        if (sink.sent[i].dgid == dgid) return static_cast<int>(i - from);
    }
    return limit;
  }
};

TEST_F(ResolverFairTest, AnotherUsersMissWaitsOneGetOfAThousandQueued) {
  for (std::uint64_t n = 1; n <= 1000; ++n) resolve_gid(remote_gid(n), by(1000));
  ASSERT_EQ(sink.sent.size(), 2u);
  const RequestId b = resolve_gid(remote_gid(5000), by(1001));
  EXPECT_EQ(sink.sent.size(), 2u);  // the slots are full: it queues
  EXPECT_LE(sends_until(remote_gid(5000), 10), 1);
  answer_oldest();
  answer_oldest();
  EXPECT_EQ(rec.last[b].error, Error::ok);
  EXPECT_EQ(resolver->stats().sa_turns_waited_max, 1u);  // what ibat stats reports of it
}

TEST_F(ResolverFairTest, TheKernelIsARequesterOfItsOwn) {
  for (std::uint64_t n = 1; n <= 1000; ++n) resolve_gid(remote_gid(n), by(1000));
  resolve_gid(remote_gid(6000));  // no requester: the kernel's local SA
  EXPECT_LE(sends_until(remote_gid(6000), 10), 1);
}

TEST_F(ResolverFairTest, WithoutRequestersTheQueueIsFifo) {  // the simulator's and before uids
  for (std::uint64_t n = 1; n <= 1000; ++n) resolve_gid(remote_gid(n));
  resolve_gid(remote_gid(6000));
  EXPECT_EQ(sends_until(remote_gid(6000), 1100), 998);
  EXPECT_EQ(resolver->stats().sa_turns_waited_max, 0u);  // one requester: no other's turn to wait for
}

TEST_F(ResolverFairTest, SameUserStaysInOrder) {
  for (std::uint64_t n = 1; n <= 10; ++n) resolve_gid(remote_gid(n), by(1000));
  resolve_gid(remote_gid(6000), by(1000));
  EXPECT_EQ(sends_until(remote_gid(6000), 20), 8);
}

}  // namespace
}  // namespace ibat::core::testing
