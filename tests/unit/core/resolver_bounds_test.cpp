// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Bounds on the Resolver's tables against a hostile client (docs/security.md): client deadlines
// are capped, finished requests leave nothing behind, foreign source GIDs are refused before any
// table sees them, and queries nobody waits for any more are not sent.
#include <cstdint>

#include "test_support.h"

namespace ibat::core::testing {
namespace {

constexpr Duration kMaxWireTimeout = std::chrono::milliseconds(0xFFFFFFFFu);  // what RESOLVE can carry

// A deterministic stream of GIDs no port of ours has (a hostile client's random SGIDs).
Gid foreign_gid(std::uint64_t n) {
  return Gid::from_parts(0xFE80'0000'0000'0000ULL, 0x1234'0000'0000'0000ULL ^ (n * 0x9E3779B97F4A7C15ULL));
}

class ResolverBounds : public ResolverTest {};

TEST_F(ResolverBounds, ClientDeadlineIsCappedByMaxRequestTimeout) {
  policy.max_request_timeout = 10s;
  reset();
  RequestId id = resolve_gid(remote_gid(1), with_timeout(kMaxWireTimeout));
  advance(10s);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::timeout);
  EXPECT_EQ(resolver->table_sizes().deadlines, 0u);
}

TEST_F(ResolverBounds, ResolveCancelPairsLeaveTheDeadlineListBoundedByPending) {
  ResolveRequest req = forced();
  req.timeout = kMaxWireTimeout;
  resolve_gid(remote_gid(1));
  answer(*sink.open_for(remote_gid(1)), good_path(remote_gid(1), 7));
  RequestId kept = resolve_gid(remote_gid(2), with_timeout(kMaxWireTimeout));  // one really pending
  for (int n = 0; n < 1'000'000; ++n) {
    RequestId id = resolve_gid(remote_gid(1), req);
    ASSERT_TRUE(resolver->cancel(id));
  }
  Resolver::TableSizes sizes = resolver->table_sizes();
  EXPECT_EQ(sizes.pending, 1u);
  EXPECT_LE(sizes.deadlines, sizes.pending);
  EXPECT_LE(sizes.queued, 2 * sizes.jobs + 64);
  resolver->flush_all();
  EXPECT_EQ(rec.times(kept), 0);  // flush does not fail a waiter, it asks again
  resolver->cancel_all();
  sizes = resolver->table_sizes();
  EXPECT_EQ(sizes.pending, 0u);
  EXPECT_EQ(sizes.deadlines, 0u);
  EXPECT_LE(sizes.jobs, resolver->stats().inflight);  // an answer in flight still fills the cache
}

TEST_F(ResolverBounds, ResolveCancelPairsWhileThePortIsDownKeepTheSendQueueBounded) {
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, false});
  for (int n = 0; n < 100'000; ++n) ASSERT_TRUE(resolver->cancel(resolve_gid(remote_gid(1))));
  Resolver::TableSizes sizes = resolver->table_sizes();
  EXPECT_EQ(sizes.jobs, 0u);
  EXPECT_LE(sizes.queued, 64u);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  EXPECT_TRUE(sink.sent.empty());  // nobody waits: nothing is asked
}

TEST_F(ResolverBounds, ForeignSourceGidIsInvalidAtOnceAndNothingIsRemembered) {
  for (std::uint64_t n = 0; n < 300'000; ++n) {
    ResolveRequest req;
    req.sgid = foreign_gid(n);
    req.target = (n % 2 == 0) ? Target{Lid{static_cast<std::uint16_t>(1 + n % 0xBFFE)}} : Target{remote_gid(n)};
    RequestId id = resolver->resolve(req, rec.callback());
    ASSERT_EQ(rec.times(id), 1);
    ASSERT_EQ(rec.last[id].error, Error::invalid);
  }
  EXPECT_TRUE(sink.sent.empty());
  Resolver::TableSizes sizes = resolver->table_sizes();
  EXPECT_EQ(sizes.pending + sizes.jobs + sizes.lid_failures + sizes.deadlines, 0u);
  EXPECT_EQ(resolver->stats().entries, 0u);
}

TEST_F(ResolverBounds, RememberedLidFailuresAreBoundedByCapacity) {
  policy.capacity = 100;
  policy.sa_burst = 2000;
  reset();
  for (std::uint16_t lid = 1; lid <= 1000; ++lid) {
    RequestId id = resolve_target(Lid{lid});
    fail(sink.sent.back(), Error::no_record);
    ASSERT_EQ(rec.last[id].error, Error::no_record);
  }
  EXPECT_LE(resolver->table_sizes().lid_failures, 100u);
}

TEST_F(ResolverBounds, AbandonedMissesSendNoFurtherQueries) {
  policy.sa_rate = 100;
  policy.sa_burst = 10;
  reset();
  constexpr std::uint64_t kMisses = 60'000;
  for (std::uint64_t n = 0; n < kMisses; ++n) resolve_gid(remote_gid(n), with_timeout(1s));
  auto time_out_open_queries = [&] {
    std::vector<QueryId> open(sink.open.begin(), sink.open.end());
    for (QueryId q : open) {
      sink.open.erase(q);
      resolver->on_query_result(q, err_result(Error::timeout));
    }
  };
  for (int step = 0; step < 10; ++step) {
    time_out_open_queries();
    advance(100ms);
  }
  ASSERT_EQ(rec.count.size(), kMisses);  // every miss timed out
  std::size_t sent_when_abandoned = sink.sent.size();
  for (int step = 0; step < 1200; ++step) {  // two minutes at sa_rate would be 12,000 more
    time_out_open_queries();
    advance(100ms);
  }
  EXPECT_EQ(sink.sent.size(), sent_when_abandoned);
  Resolver::TableSizes sizes = resolver->table_sizes();
  EXPECT_EQ(sizes.jobs, 0u);
  EXPECT_EQ(sizes.queued, 0u);
}

// A burst of outgoing items (here every pending request cancelled at once; a table's paths stored
// for the shared table are another) leaves no room behind: the outbox would otherwise keep a
// port's largest burst allocated for the daemon's life (in ibat-sim, one a simulated host).
TEST_F(ResolverBounds, ABurstOfCompletionsLeavesNoOutboxBehind) {
  for (std::uint64_t n = 1; n <= 1000; ++n) resolve_gid(remote_gid(n));
  ASSERT_EQ(resolver->table_sizes().pending, 1000u);
  resolver->cancel_all(Error::cancelled);
  ASSERT_EQ(rec.count.size(), 1000u);
  EXPECT_LE(resolver->table_sizes().outbox, 64u);
}

}  // namespace
}  // namespace ibat::core::testing
