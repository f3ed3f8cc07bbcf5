// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver request side: coalescing, flush on completion, exactly-once completion (timeout,
// cancel, flush, eviction), DLID 0 rejection, retries/backoff/negative cache, SA shaping,
// overload, LRU, lookups by LID and hardware address, re-entrant callbacks.
#include "test_support.h"

namespace ibat::core::testing {
namespace {

TEST_F(ResolverTest, ThousandConcurrentRequestsCostOneQueryAndOneCompletionFlushesAll) {
  std::vector<RequestId> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(resolve_gid(remote_gid(1)));
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent[0].dgid, remote_gid(1));
  EXPECT_EQ(sink.sent[0].sgid, port_gid());
  EXPECT_TRUE(rec.order.empty());
  EXPECT_EQ(resolver->stats().pending, 1000u);

  answer(sink.sent[0], good_path(remote_gid(1), 7));
  for (RequestId id : ids) {
    ASSERT_EQ(rec.times(id), 1);
    EXPECT_EQ(rec.last[id].error, Error::ok);
    EXPECT_EQ(rec.last[id].path.dlid, Lid{7});
    EXPECT_EQ(rec.last[id].state, EntryState::valid);
  }
  Stats s = resolver->stats();
  EXPECT_EQ(s.sa_queries, 1u);
  EXPECT_EQ(s.coalesced, 999u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.inflight, 0u);
}

TEST_F(ResolverTest, CacheHitCompletesBeforeResolveReturns) {
  resolve_gid(remote_gid(1));
  answer(sink.sent[0], good_path(remote_gid(1), 7));
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{7});
  EXPECT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(resolver->stats().cache_hits, 1u);
}

TEST_F(ResolverTest, TimeoutCompletesExactlyOnceAndALateAnswerStillFillsTheCache) {
  policy.request_timeout = 1s;
  reset();
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(resolver->next_wakeup(), clock.now() + 1s);
  advance(999ms);
  EXPECT_EQ(rec.times(id), 0);
  advance(1ms);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::timeout);
  answer(sink.sent[0], good_path(remote_gid(1), 7));
  EXPECT_EQ(rec.times(id), 1);
  RequestId hit = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[hit].error, Error::ok);
  EXPECT_EQ(resolver->stats().failures_by_reason[static_cast<int>(Error::timeout)], 1u);
}

TEST_F(ResolverTest, PerRequestTimeoutOverridesTheDefault) {
  RequestId shortr = resolve_gid(remote_gid(1), with_timeout(10ms));
  RequestId longr = resolve_gid(remote_gid(1));
  advance(10ms);
  EXPECT_EQ(rec.last[shortr].error, Error::timeout);
  EXPECT_EQ(rec.times(longr), 0);
}

TEST_F(ResolverTest, CancelCompletesExactlyOnce) {
  RequestId a = resolve_gid(remote_gid(1));
  RequestId b = resolve_gid(remote_gid(1));
  EXPECT_TRUE(resolver->cancel(a));
  EXPECT_FALSE(resolver->cancel(a));
  EXPECT_EQ(rec.times(a), 1);
  EXPECT_EQ(rec.last[a].error, Error::cancelled);
  answer(sink.sent[0], good_path(remote_gid(1), 7));
  EXPECT_EQ(rec.times(a), 1);
  EXPECT_EQ(rec.times(b), 1);
  EXPECT_EQ(rec.last[b].error, Error::ok);
  EXPECT_FALSE(resolver->cancel(b));
}

TEST_F(ResolverTest, CancelAllCompletesEveryPendingRequest) {
  RequestId a = resolve_gid(remote_gid(1));
  RequestId b = resolve_gid(remote_gid(2));
  RequestId c = resolve_target(*IpAddr::parse("10.1.1.1"));
  resolver->cancel_all();
  for (RequestId id : {a, b, c}) {
    EXPECT_EQ(rec.times(id), 1);
    EXPECT_EQ(rec.last[id].error, Error::cancelled);
  }
  EXPECT_EQ(resolver->stats().pending, 0u);
  advance(1h);
  for (RequestId id : {a, b, c}) EXPECT_EQ(rec.times(id), 1);
}

TEST_F(ResolverTest, DlidZeroAnswerIsRejectedRetriedAndNeverServed) {
  RequestId id = resolve_gid(remote_gid(1));
  answer(sink.sent[0], good_path(remote_gid(1), 0));
  EXPECT_EQ(rec.times(id), 0);
  EXPECT_EQ(resolver->stats().rejected_paths, 1u);
  RequestId other = resolve_gid(remote_gid(1), cache_only());
  EXPECT_EQ(rec.last[other].error, Error::no_record);  // nothing servable in the cache
  run_for(policy.retry_base * 2);
  ASSERT_EQ(sink.sent.size(), 2u);
  answer(sink.sent[1], good_path(remote_gid(1), 9));
  EXPECT_EQ(rec.last[id].path.dlid, Lid{9});
}

TEST_F(ResolverTest, OnlyUnservableAnswersMeanInvalidAfterRetries) {
  policy.retry_count = 2;
  policy.request_timeout = 1min;
  reset();
  RequestId id = resolve_gid(remote_gid(1));
  PathRecord bad_mtu = good_path(remote_gid(1), 5);
  bad_mtu.mtu = 0;
  PathRecord bad_slid = good_path(remote_gid(1), 5, 0);
  PathRecord other_dgid = good_path(remote_gid(2), 5);
  for (const PathRecord& bad : {bad_mtu, bad_slid, other_dgid}) {
    ASSERT_TRUE(sink.open_for(remote_gid(1)));
    answer(*sink.open_for(remote_gid(1)), bad);
    run_for(2s, 10ms);
  }
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::invalid);
  EXPECT_EQ(resolver->stats().rejected_paths, 3u);
  for (const auto& e : resolver->entries()) EXPECT_EQ(e.state, EntryState::failed);
}

TEST_F(ResolverTest, FailedQueriesRetryWithBackoffThenFailFastForNegativeTtl) {
  policy.retry_count = 2;
  policy.retry_base = 100ms;
  policy.retry_max = 1s;
  policy.retry_jitter = 0.25;
  policy.negative_ttl = 5s;
  policy.request_timeout = 1min;
  reset();
  RequestId id = resolve_gid(remote_gid(1));
  std::vector<Duration> expected = {100ms, 200ms};
  for (Duration nominal : expected) {
    fail(sink.sent.back(), Error::timeout);
    std::size_t before = sink.sent.size();
    TimePoint failed_at = clock.now();
    while (sink.sent.size() == before) advance(1ms);
    Duration waited = clock.now() - failed_at;
    EXPECT_GE(waited, nominal * 3 / 4);
    EXPECT_LE(waited, nominal * 5 / 4 + 1ms);
    EXPECT_EQ(rec.times(id), 0);
  }
  fail(sink.sent.back(), Error::timeout);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::timeout);
  Stats s = resolver->stats();
  EXPECT_EQ(s.sa_queries, 3u);
  EXPECT_EQ(s.sa_retries, 2u);
  EXPECT_EQ(s.sa_timeouts, 3u);

  // Negative cache: fail at once with the last error, no query.
  RequestId fast = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[fast].error, Error::timeout);
  EXPECT_EQ(sink.sent.size(), 3u);
  advance(5s);
  RequestId again = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(again), 0);
  EXPECT_EQ(sink.sent.size(), 4u);
}

TEST_F(ResolverTest, NoRecordIsNotRetriedAndIsCachedNegatively) {
  RequestId id = resolve_gid(remote_gid(1));
  fail(sink.sent[0], Error::no_record);
  EXPECT_EQ(rec.last[id].error, Error::no_record);
  RequestId again = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[again].error, Error::no_record);
  run_for(1s, 10ms);
  EXPECT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(resolver->stats().sa_errors, 1u);
}

TEST_F(ResolverTest, InflightCapHoldsNewQueriesAndQueuedWaitersStillTimeOut) {
  policy.sa_max_inflight = 2;
  policy.request_timeout = 1s;
  policy.sa_adaptive = false;  // the cap alone (the SaPacer would start at one query in flight)
  reset();
  RequestId a = resolve_gid(remote_gid(1));
  resolve_gid(remote_gid(2));
  RequestId c = resolve_gid(remote_gid(3));
  EXPECT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(resolver->stats().inflight, 2u);
  answer(sink.sent[0], good_path(remote_gid(1), 5));
  EXPECT_EQ(rec.times(a), 1);
  ASSERT_EQ(sink.sent.size(), 3u);
  EXPECT_EQ(sink.sent[2].dgid, remote_gid(3));
  RequestId d = resolve_gid(remote_gid(4));
  EXPECT_EQ(sink.sent.size(), 3u);
  advance(1s);
  EXPECT_EQ(rec.last[c].error, Error::timeout);
  EXPECT_EQ(rec.last[d].error, Error::timeout);
}

TEST_F(ResolverTest, TokenBucketShapesNewQueries) {
  policy.sa_rate = 10;
  policy.sa_burst = 2;
  policy.sa_adaptive = false;  // the bucket alone (no answers here: the SaPacer would hold 1)
  reset();
  for (std::uint64_t n = 1; n <= 5; ++n) resolve_gid(remote_gid(n));
  EXPECT_EQ(sink.sent.size(), 2u);
  ASSERT_TRUE(resolver->next_wakeup());
  EXPECT_LE(*resolver->next_wakeup(), clock.now() + 100ms + 1us);
  advance(50ms);
  EXPECT_EQ(sink.sent.size(), 2u);
  advance(50ms);
  EXPECT_EQ(sink.sent.size(), 3u);
  advance(200ms);
  EXPECT_EQ(sink.sent.size(), 5u);
}

// The SaPacer sits below sa_max_inflight and the bucket: one query before any answer, more as
// prompt answers come back, fewer after a timeout.
TEST_F(ResolverTest, SaPacerWindowGrowsWithPromptAnswersAndShrinksOnTimeout) {
  for (std::uint64_t n = 1; n <= 100; ++n) resolve_gid(remote_gid(n));
  ASSERT_EQ(sink.open.size(), 1u);
  for (int round = 0; round < 6; ++round) {
    run_for(1ms, 20us);  // the paced gaps (srtt / window) pass; what is open waited <= 1 ms
    for (QueryId id : std::set<QueryId>(sink.open)) {
      sink.open.erase(id);
      answer(sink.sent[id - 1], good_path(*sink.sent[id - 1].dgid, 10));
    }
  }
  run_for(1ms, 20us);
  EXPECT_GT(sink.open.size(), 4u);
  ASSERT_LT(sink.sent.size(), 100u);  // still queued: only the window holds them back
  const std::size_t wide = sink.open.size();
  clock.advance(1ms);
  for (QueryId id : std::set<QueryId>(sink.open)) {
    sink.open.erase(id);
    fail(sink.sent[id - 1], Error::timeout);
  }
  run_for(2ms, 20us);
  EXPECT_LT(sink.open.size(), wide) << "sent " << sink.sent.size();
}

TEST_F(ResolverTest, OverloadAnswersAtOnce) {
  policy.max_waiters_per_key = 3;
  policy.max_pending = 5;
  reset();
  for (int i = 0; i < 3; ++i) resolve_gid(remote_gid(1));
  RequestId fourth = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(fourth), 1);
  EXPECT_EQ(rec.last[fourth].error, Error::overloaded);
  resolve_gid(remote_gid(2));
  resolve_gid(remote_gid(3));
  RequestId sixth = resolve_gid(remote_gid(4));
  EXPECT_EQ(rec.last[sixth].error, Error::overloaded);
  RequestId by_ip = resolve_target(*IpAddr::parse("10.0.0.1"));
  EXPECT_EQ(rec.last[by_ip].error, Error::overloaded);
  EXPECT_EQ(resolver->stats().pending, 5u);
  EXPECT_EQ(resolver->stats().failures_by_reason[static_cast<int>(Error::overloaded)], 3u);
}

TEST_F(ResolverTest, LruEvictsTheLeastRecentlyUsedIdleEntryAtCapacity) {
  policy.capacity = 3;
  reset();
  for (std::uint64_t n = 1; n <= 3; ++n) {
    resolve_gid(remote_gid(n));
    answer(sink.sent.back(), good_path(remote_gid(n), static_cast<std::uint16_t>(n + 10)));
    advance(1s);
  }
  resolve_gid(remote_gid(1));  // 1 is now the most recently used; 2 the least
  resolve_gid(remote_gid(4));
  answer(sink.sent.back(), good_path(remote_gid(4), 14));
  std::set<Gid> cached;
  for (const auto& e : resolver->entries()) cached.insert(e.dgid);
  EXPECT_EQ(cached, (std::set<Gid>{remote_gid(1), remote_gid(3), remote_gid(4)}));
  EXPECT_EQ(resolver->stats().evictions, 1u);
  EXPECT_EQ(resolver->stats().entries, 3u);
}

TEST_F(ResolverTest, EntriesWithWaitersAreNeverEvictedAndEveryWaiterCompletesOnce) {
  policy.capacity = 2;
  reset();
  std::vector<RequestId> ids;
  for (std::uint64_t n = 1; n <= 4; ++n) ids.push_back(resolve_gid(remote_gid(n)));
  EXPECT_EQ(resolver->stats().entries, 4u);  // over capacity while all are busy
  EXPECT_EQ(resolver->stats().evictions, 0u);
  for (std::uint64_t n = 1; n <= 4; ++n)
    answer(sink.sent[n - 1], good_path(remote_gid(n), static_cast<std::uint16_t>(n + 10)));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(rec.times(ids[i]), 1);
    EXPECT_EQ(rec.last[ids[i]].path.dlid, Lid{static_cast<std::uint16_t>(i + 11)});
  }
  resolve_gid(remote_gid(5));  // the next insert brings the cache back to capacity
  EXPECT_LE(resolver->stats().entries, 3u);
}

TEST_F(ResolverTest, FlushOfAnInflightQueryKeepsItsWaitersForANewQuery) {
  RequestId id = resolve_gid(remote_gid(1));
  PathQuery first = sink.sent[0];
  EXPECT_TRUE(resolver->flush(remote_gid(1)));
  EXPECT_TRUE(sink.cancelled.contains(first.id));
  ASSERT_EQ(sink.sent.size(), 2u);
  answer(first, good_path(remote_gid(1), 3));  // late answer to the cancelled query: ignored
  EXPECT_EQ(rec.times(id), 0);
  answer(sink.sent[1], good_path(remote_gid(1), 4));
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{4});
}

TEST_F(ResolverTest, FlushDropsCachedEntries) {
  resolve_gid(remote_gid(1));
  answer(sink.sent[0], good_path(remote_gid(1), 3));
  resolve_gid(remote_gid(2));
  answer(sink.sent[1], good_path(remote_gid(2), 4));
  EXPECT_EQ(resolver->flush(remote_gid(9)), 0u);  // each flush says how many entries it dropped
  EXPECT_EQ(resolver->flush(remote_gid(1), Pkey{0xFFFF}), 1u);
  EXPECT_EQ(resolver->stats().entries, 1u);
  EXPECT_EQ(resolver->flush_all(), 1u);
  EXPECT_EQ(resolver->stats().entries, 0u);
  RequestId id = resolve_gid(remote_gid(2));
  EXPECT_EQ(rec.times(id), 0);
  EXPECT_EQ(sink.sent.size(), 3u);
}

TEST_F(ResolverTest, ResolveByLidQueriesByDlidThenIndexesTheEntryByDgid) {
  RequestId id = resolve_target(Lid{7});
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent[0].dlid, Lid{7});
  EXPECT_FALSE(sink.sent[0].dgid);
  answer(sink.sent[0], good_path(remote_gid(3), 7));
  EXPECT_EQ(rec.last[id].path.dgid, remote_gid(3));
  RequestId by_gid = resolve_gid(remote_gid(3));
  RequestId by_lid = resolve_target(Lid{7});
  EXPECT_EQ(rec.last[by_gid].path.dlid, Lid{7});
  EXPECT_EQ(rec.last[by_lid].path.dgid, remote_gid(3));
  EXPECT_EQ(sink.sent.size(), 1u);
}

TEST_F(ResolverTest, ResolveByLidWithUnknownLidFailsAndIsCachedNegatively) {
  RequestId id = resolve_target(Lid{99});
  fail(sink.sent[0], Error::no_record);
  EXPECT_EQ(rec.last[id].error, Error::no_record);
  RequestId again = resolve_target(Lid{99});
  EXPECT_EQ(rec.last[again].error, Error::no_record);
  EXPECT_EQ(sink.sent.size(), 1u);
}

TEST_F(ResolverTest, ResolveByHardwareAddressUsesItsGid) {
  RequestId id = resolve_target(HwAddr::from(0x48, remote_gid(5)));
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent[0].dgid, remote_gid(5));
  answer(sink.sent[0], good_path(remote_gid(5), 8));
  EXPECT_EQ(rec.last[id].path.dlid, Lid{8});
}

TEST_F(ResolverTest, InvalidRequestsFailAtOnce) {
  RequestId zero_gid = resolve_gid(Gid{});
  RequestId zero_lid = resolve_target(Lid{0});
  RequestId mcast_lid = resolve_target(Lid{0xC001});
  RequestId bad_pkey = resolve_gid(remote_gid(1), with_pkey(Pkey{0x8000}));
  for (RequestId id : {zero_gid, zero_lid, mcast_lid, bad_pkey}) EXPECT_EQ(rec.last[id].error, Error::invalid);
  EXPECT_TRUE(sink.sent.empty());
}

TEST_F(ResolverTest, CacheOnlyNeverQueries) {
  RequestId id = resolve_gid(remote_gid(1), cache_only());
  EXPECT_EQ(rec.last[id].error, Error::no_record);
  EXPECT_TRUE(sink.sent.empty());
}

TEST_F(ResolverTest, ForceSaQueriesDespiteAValidEntry) {
  resolve_gid(remote_gid(1));
  answer(sink.sent[0], good_path(remote_gid(1), 3));
  RequestId id = resolve_gid(remote_gid(1), forced());
  EXPECT_EQ(rec.times(id), 0);
  ASSERT_EQ(sink.sent.size(), 2u);
  RequestId served = resolve_gid(remote_gid(1));  // others are still served meanwhile
  EXPECT_EQ(rec.last[served].path.dlid, Lid{3});
  answer(sink.sent[1], good_path(remote_gid(1), 4));
  EXPECT_EQ(rec.last[id].path.dlid, Lid{4});
}

TEST_F(ResolverTest, AKnownDestinationTheSaNoLongerKnowsIsUnreachableNotNoRecord) {
  resolve_gid(remote_gid(1));
  answer(sink.sent[0], good_path(remote_gid(1), 3));
  RequestId id = resolve_gid(remote_gid(1), forced());
  fail(sink.sent[1], Error::no_record);  // the host left the fabric (link down, no trap seen)
  EXPECT_EQ(rec.last[id].error, Error::unreachable);
  RequestId plain = resolve_gid(remote_gid(1));  // the old path is not served any more
  EXPECT_EQ(rec.last[plain].error, Error::unreachable);
  EXPECT_EQ(sink.sent.size(), 2u);
  advance(policy.negative_ttl);
  RequestId later = resolve_gid(remote_gid(1));  // asked again after the negative TTL
  ASSERT_EQ(sink.sent.size(), 3u);
  answer(sink.sent[2], good_path(remote_gid(1), 5));
  EXPECT_EQ(rec.last[later].path.dlid, Lid{5});
}

TEST_F(ResolverTest, CompletionsMayCallBackIntoTheResolver) {
  policy.sa_adaptive = false;  // both queries in flight at once
  reset();
  RequestId victim = resolve_gid(remote_gid(2));
  RequestId nested = 0;
  int first_calls = 0;
  ResolveRequest req;
  req.target = remote_gid(1);
  resolver->resolve(req, [&](RequestId, const ResolveResult&) {
    ++first_calls;
    EXPECT_TRUE(resolver->cancel(victim));
    ResolveRequest again;
    again.target = remote_gid(1);
    nested = resolver->resolve(again, rec.callback());  // a cache hit from inside a completion
  });
  answer(*sink.open_for(remote_gid(1)), good_path(remote_gid(1), 3));
  EXPECT_EQ(first_calls, 1);
  EXPECT_EQ(rec.times(victim), 1);
  EXPECT_EQ(rec.last[victim].error, Error::cancelled);
  ASSERT_NE(nested, 0u);
  EXPECT_EQ(rec.times(nested), 1);
  EXPECT_EQ(rec.last[nested].error, Error::ok);
}

// A sink that answers inside send_path_query, as a synchronous fake fabric would.
class InlineSink : public QuerySink {
 public:
  void send_path_query(const PathQuery& q) override {
    ++sent;
    resolver->on_query_result(q.id, ok_result(good_path(*q.dgid, 21)));
  }
  Resolver* resolver = nullptr;
  int sent = 0;
};

TEST(ResolverInline, AnAnswerInsideSendIsHandled) {
  ManualClock clock;
  InlineSink sink;
  Resolver resolver(Policy{}, clock, sink);
  sink.resolver = &resolver;
  resolver.on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  Recorder rec;
  ResolveRequest req;
  req.target = remote_gid(1);
  RequestId id = resolver.resolve(req, rec.callback());
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{21});
  EXPECT_EQ(sink.sent, 1);
  EXPECT_EQ(resolver.stats().pending, 0u);
}

// A Resolver that has had no port report yet, and a request for remote_gid(1) without a source GID.
class ResolverNoPort : public ::testing::Test {
 protected:
  ResolverNoPort() { req.target = remote_gid(1); }

  ManualClock clock;
  FakeSink sink;
  Resolver resolver{Policy{}, clock, sink};
  Recorder rec;
  ResolveRequest req;
};

// A daemon that has just started has no port report yet: a request without a source GID waits
// for it (a destination that exists must not fail), and goes on as an ordinary request.
TEST_F(ResolverNoPort, RequestsWithoutSourceGidWaitForThePortThenResolve) {
  RequestId id = resolver.resolve(req, rec.callback());
  EXPECT_EQ(rec.times(id), 0) << "waits for the port";
  EXPECT_TRUE(sink.sent.empty());
  req.sgid = port_gid();  // an explicit source GID works without port information
  RequestId explicit_sgid = resolver.resolve(req, rec.callback());
  EXPECT_EQ(rec.times(explicit_sgid), 0);
  EXPECT_EQ(sink.sent.size(), 1u);
  resolver.on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  EXPECT_EQ(sink.sent.size(), 1u) << "the waiting request joined the query already in flight";
  resolver.on_query_result(sink.sent[0].id, QueryResult{Error::ok, good_path(remote_gid(1), 21)});
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{21});
  EXPECT_EQ(resolver.stats().pending, 0u);
}

// No port report before the deadline: `unreachable` then, and a cancelled waiter leaves nothing.
TEST_F(ResolverNoPort, WithoutAPortReportByTheDeadlineRequestsAreUnreachable) {
  RequestId waits = resolver.resolve(req, rec.callback());
  RequestId cancelled = resolver.resolve(req, rec.callback());
  EXPECT_TRUE(resolver.cancel(cancelled));
  EXPECT_EQ(rec.last[cancelled].error, Error::cancelled);
  clock.advance(Policy{}.request_timeout);
  resolver.tick();
  EXPECT_EQ(rec.times(waits), 1);
  EXPECT_EQ(rec.last[waits].error, Error::unreachable);
  EXPECT_EQ(resolver.stats().pending, 0u);
  resolver.on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  EXPECT_TRUE(sink.sent.empty()) << "nothing left waiting";
}

}  // namespace
}  // namespace ibat::core::testing
