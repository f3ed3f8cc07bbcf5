// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver fabric and neighbour events: SM change, LID change, port down/up, traps 64/65,
// ARP (GID change, provisional paths), TTL expiry and snapshot load.
#include <algorithm>

#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

class ResolverEventsTest : public ResolverFilledTest {
 protected:
  std::size_t open_count() const { return sink.open.size(); }
};

TEST_F(ResolverEventsTest, SmChangeServesStaleRevalidatesWithinRateMostRecentFirstAndFailsNothing) {
  policy.revalidate_per_s = 20;
  policy.revalidate_jitter = 500ms;
  reset();
  populate(40);
  std::size_t before = sink.sent.size();
  resolver->on_sm_changed();
  EXPECT_EQ(resolver->stats().sm_changes, 1u);
  for (const auto& e : resolver->entries()) EXPECT_EQ(e.state, EntryState::stale);

  // Served at once, marked stale, while revalidation runs at <= 20/s (gaps >= 25 ms).
  std::vector<TimePoint> sent_at;
  std::vector<Gid> order;
  TimePoint start = clock.now();
  for (int step = 0; step < 4000 && order.size() < 40; ++step) {
    RequestId id = resolve_gid(remote_gid(1 + static_cast<std::uint64_t>(step) % 40));
    ASSERT_EQ(rec.times(id), 1);
    ASSERT_EQ(rec.last[id].error, Error::ok);
    advance(1ms);
    while (sink.sent.size() > before + order.size()) {
      const PathQuery& q = sink.sent[before + order.size()];
      order.push_back(*q.dgid);
      sent_at.push_back(clock.now());
      answer(q, good_path(*q.dgid, static_cast<std::uint16_t>(200 + order.size())));
    }
  }
  ASSERT_EQ(order.size(), 40u);
  EXPECT_LE(sent_at.front() - start, 500ms + 1ms);
  for (std::size_t i = 1; i < sent_at.size(); ++i) EXPECT_GE(sent_at[i] - sent_at[i - 1], 24ms);
  Duration span = sent_at.back() - sent_at.front();
  EXPECT_GE(span, 39 * 50ms / 2);
  EXPECT_LE(span, 39 * 75ms);
  // Ordered by recent use at the time of the SM change: 40 first, 1 last.
  EXPECT_EQ(order.front(), remote_gid(40));
  EXPECT_EQ(order.back(), remote_gid(1));
  Stats s = resolver->stats();
  EXPECT_EQ(s.failures, 0u);
  EXPECT_GE(s.stale_hits, 1u);
  EXPECT_EQ(s.revalidations, 40u);
  // Revalidated answers are served as valid with the new DLIDs.
  for (const auto& e : resolver->entries()) {
    EXPECT_EQ(e.state, EntryState::valid);
    EXPECT_GE(e.path.dlid.value, 201);
  }
}

TEST_F(ResolverEventsTest, SmChangeDuringSaOutageKeepsServingTheLastGoodPath) {
  policy.retry_count = 1;
  reset();
  populate(1);
  resolver->on_sm_changed();
  run_for(policy.revalidate_jitter + 10ms, 10ms);
  ASSERT_EQ(sink.sent.size(), 2u);
  fail(sink.sent[1], Error::timeout);
  run_for(1s, 10ms);
  ASSERT_EQ(sink.sent.size(), 3u);
  fail(sink.sent[2], Error::timeout);
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].state, EntryState::stale);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
  EXPECT_EQ(resolver->stats().failures, 0u);
}

// A query that timed out while the old SM was gone waits out its backoff; the new SM ends the wait:
// it goes again at the next tick, with a fresh retry count.
TEST_F(ResolverEventsTest, AnSmChangeSendsTheQueriesWaitingOutABackoffAtOnce) {
  RequestId id = resolve_gid(remote_gid(7), with_timeout(60s));
  ASSERT_EQ(sink.sent.size(), 1u);
  fail(sink.sent[0], Error::timeout);
  advance(10ms);
  ASSERT_EQ(sink.sent.size(), 1u) << "in its backoff";
  resolver->on_sm_changed();
  advance(1ms);
  ASSERT_EQ(sink.sent.size(), 2u) << "sent again at the next tick";
  EXPECT_EQ(sink.sent[1].dgid, remote_gid(7));
  for (std::uint32_t i = 0; i < policy.retry_count; ++i) {  // the count starts again
    fail(sink.sent.back(), Error::timeout);
    run_for(policy.retry_max + 1s, 100ms);
  }
  ASSERT_EQ(sink.sent.size(), 2u + policy.retry_count);
  EXPECT_EQ(rec.times(id), 0) << "still waiting: the new SM's retries are its own";
  answer(sink.sent.back(), good_path(remote_gid(7), 107));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{107});
}

TEST_F(ResolverEventsTest, LocalLidChangeRevalidatesAndServesTheNewPath) {
  populate(2);
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  EXPECT_EQ(resolver->stats().lid_changes, 1u);
  for (const auto& e : resolver->entries()) EXPECT_EQ(e.state, EntryState::stale);  // requests wait: resolver_new_lids_test
  run_for(policy.revalidate_jitter + 100ms, 10ms);
  ASSERT_EQ(sink.sent.size(), 4u);
  for (std::size_t i = 2; i < 4; ++i) answer(sink.sent[i], good_path(*sink.sent[i].dgid, 55, 9));
  RequestId fresh = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[fresh].state, EntryState::valid);
  EXPECT_EQ(rec.last[fresh].path.dlid, Lid{55});
  EXPECT_EQ(rec.last[fresh].path.slid, Lid{9});
}

TEST_F(ResolverEventsTest, PortDownKeepsEntriesPausesQueriesAndResumesOnPortUp) {
  policy.sa_adaptive = false;  // every query in flight at once, whatever the SaPacer's window
  reset();
  populate(1);
  RequestId inflight = resolve_gid(remote_gid(2));
  PathQuery cancelled = sink.sent.back();
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, false});
  EXPECT_TRUE(sink.cancelled.contains(cancelled.id));
  RequestId cached = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[cached].error, Error::ok);
  RequestId waiting = resolve_gid(remote_gid(3));
  RequestId times_out = resolve_gid(remote_gid(4), with_timeout(100ms));
  run_for(200ms, 10ms);
  EXPECT_EQ(sink.sent.size(), 2u);  // nothing sent while down
  EXPECT_EQ(rec.last[times_out].error, Error::unreachable);  // the port's doing, not the SA's

  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  auto q2 = sink.open_for(remote_gid(2)), q3 = sink.open_for(remote_gid(3));
  ASSERT_TRUE(q2 && q3);
  answer(*q2, good_path(remote_gid(2), 12));
  answer(*q3, good_path(remote_gid(3), 13));
  EXPECT_EQ(rec.last[inflight].path.dlid, Lid{12});
  EXPECT_EQ(rec.last[waiting].path.dlid, Lid{13});
  EXPECT_EQ(rec.times(inflight), 1);
}

TEST_F(ResolverEventsTest, Trap65MakesTheDestinationGoneAndTrap64ReResolvesIt) {
  populate(1);
  RequestId waiter = resolve_gid(remote_gid(1), forced());
  PathQuery q = sink.sent.back();
  resolver->on_gid_out_of_service(remote_gid(1));
  EXPECT_EQ(rec.last[waiter].error, Error::unreachable);
  EXPECT_TRUE(sink.cancelled.contains(q.id));
  RequestId fast = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[fast].error, Error::unreachable);
  EXPECT_EQ(resolver->entries()[0].state, EntryState::gone);

  std::size_t before = sink.sent.size();
  resolver->on_gid_in_service(remote_gid(1));
  ASSERT_EQ(sink.sent.size(), before + 1);
  RequestId waits = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(waits), 0);
  answer(sink.sent.back(), good_path(remote_gid(1), 77));
  EXPECT_EQ(rec.last[waits].path.dlid, Lid{77});
}

TEST_F(ResolverEventsTest, Trap65FailsWaitersOfAFirstQueryAtOnce) {
  RequestId id = resolve_gid(remote_gid(1));
  resolver->on_gid_out_of_service(remote_gid(1));
  EXPECT_EQ(rec.last[id].error, Error::unreachable);
  EXPECT_EQ(resolver->stats().inflight, 0u);
}

TEST_F(ResolverEventsTest, ArpGidChangeReResolvesTheIp) {
  IpAddr ip = *IpAddr::parse("192.0.2.10");
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(1)));
  ASSERT_EQ(sink.sent.size(), 1u);  // ARP fills the cache ahead of use
  answer(sink.sent[0], good_path(remote_gid(1), 31));
  RequestId first = resolve_target(ip);
  EXPECT_EQ(rec.last[first].path.dgid, remote_gid(1));

  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(2)));
  ASSERT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(sink.sent[1].dgid, remote_gid(2));
  RequestId second = resolve_target(ip);
  EXPECT_EQ(rec.times(second), 0);
  answer(sink.sent[1], good_path(remote_gid(2), 32));
  EXPECT_EQ(rec.last[second].path.dgid, remote_gid(2));
  EXPECT_EQ(rec.last[second].path.dlid, Lid{32});
}

TEST_F(ResolverEventsTest, ArpRefreshOfAKnownIpDoesNotQueryAgain) {
  IpAddr ip = *IpAddr::parse("192.0.2.11");
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(1)));
  answer(sink.sent[0], good_path(remote_gid(1), 31));
  resolver->on_sm_changed();  // entry stale, revalidation scheduled at its own pace
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(1)));
  EXPECT_EQ(sink.sent.size(), 1u);
  resolver->flush_all();      // nothing cached any more: a refresh fills the cache again
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(1)));
  EXPECT_EQ(sink.sent.size(), 2u);
}

TEST_F(ResolverEventsTest, IpWithoutNeighbourWaitsForItThenIsServed) {
  IpAddr ip = *IpAddr::parse("fd00::5");
  RequestId id = resolve_target(ip);
  EXPECT_TRUE(sink.sent.empty());
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(5)));
  ASSERT_EQ(sink.sent.size(), 1u);
  answer(sink.sent[0], good_path(remote_gid(5), 40));
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{40});
}

TEST_F(ResolverEventsTest, IpWithoutNeighbourBecomesUnreachableAtItsDeadline) {
  RequestId id = resolve_target(*IpAddr::parse("192.0.2.99"), with_timeout(2s));
  advance(2s);
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::unreachable);
}

TEST_F(ResolverEventsTest, ProvisionalPathIsServedThenUpgraded) {
  resolver->on_broadcast_params({Pkey{0xFFFF}, 4, 3, 0, 18});
  IpAddr ip = *IpAddr::parse("192.0.2.20");
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(6)), Lid{12});
  ASSERT_EQ(sink.sent.size(), 1u);
  RequestId early = resolve_target(ip);
  ASSERT_EQ(rec.last[early].error, Error::ok);
  EXPECT_EQ(rec.last[early].state, EntryState::provisional);
  EXPECT_EQ(rec.last[early].path.dlid, Lid{12});
  EXPECT_EQ(rec.last[early].path.slid, Lid{1});
  EXPECT_EQ(resolver->stats().provisional_hits, 1u);

  PathRecord real = good_path(remote_gid(6), 12);
  real.sl = 5;
  real.rate = 16;
  answer(sink.sent[0], real);
  RequestId later = resolve_target(ip);
  EXPECT_EQ(rec.last[later].state, EntryState::valid);
  EXPECT_EQ(rec.last[later].path.sl, 5);
  EXPECT_EQ(rec.last[later].path.rate, 16);
}

TEST_F(ResolverEventsTest, ProvisionalPathNeedsServableParamsAndExpires) {
  policy.provisional_ttl = 1s;
  reset();
  IpAddr ip = *IpAddr::parse("192.0.2.21");
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(7)), Lid{12});  // no broadcast params yet
  RequestId waits = resolve_target(ip);
  EXPECT_EQ(rec.times(waits), 0);
  resolver->flush_all();
  resolver->on_broadcast_params({Pkey{0xFFFF}, 4, 3, 0, 18});
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(7)), Lid{0});  // DLID 0 never served
  RequestId still = resolve_target(ip);
  EXPECT_EQ(rec.times(still), 0);
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(8)), Lid{13});
  RequestId prov = resolve_target(ip);
  EXPECT_EQ(rec.last[prov].state, EntryState::provisional);
  clock.advance(1s);
  RequestId expired = resolve_target(ip);
  EXPECT_EQ(rec.times(expired), 0);
}

TEST_F(ResolverEventsTest, TtlExpiryServesStaleAndRevalidatesOnce) {
  policy.path_ttl = 10s;
  reset();
  populate(1);
  clock.advance(10s);
  RequestId a = resolve_gid(remote_gid(1));
  RequestId b = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[a].state, EntryState::stale);
  EXPECT_EQ(rec.last[b].state, EntryState::stale);
  ASSERT_EQ(sink.sent.size(), 2u);
  answer(sink.sent[1], good_path(remote_gid(1), 101));
  RequestId c = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[c].state, EntryState::valid);
  EXPECT_EQ(rec.last[c].age, Duration::zero());
}

TEST_F(ResolverEventsTest, LoadStaleServesSnapshotEntriesAndRevalidatesThem) {
  policy.sa_adaptive = false;  // the three revalidations in flight at once
  reset();
  populate(3);
  std::vector<CacheEntryView> snapshot = resolver->entries();
  reset();
  sink.sent.clear();
  resolver->load_stale(snapshot);
  EXPECT_EQ(resolver->stats().entries, 3u);
  RequestId id = resolve_gid(remote_gid(2));
  EXPECT_EQ(rec.last[id].state, EntryState::stale);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{102});
  run_for(policy.revalidate_jitter + 100ms, 10ms);
  EXPECT_EQ(sink.sent.size(), 3u);
  EXPECT_EQ(sink.sent[0].dgid, remote_gid(3));  // most recently used first
}

// What a WATCH `path` event reports: a cached path whose DLID changed, that was lost, or whose
// provisional path the SA confirmed; not the routine revalidation that finds the same DLID.
TEST_F(ResolverEventsTest, PathObserverSeesDlidChangesAndLossesButNotRoutineRevalidation) {
  std::vector<PathChange> changes;
  resolver->set_path_observer([&](const PathChange& c) { changes.push_back(c); });
  populate(3);
  EXPECT_TRUE(changes.empty());  // a first answer is news to nobody
  resolver->on_sm_changed();
  for (std::uint64_t i = 1; i <= 3; ++i) {
    RequestId id = resolve_gid(remote_gid(i), forced());
    auto q = sink.open_for(remote_gid(i));
    ASSERT_TRUE(q);
    answer(*q, good_path(remote_gid(i), static_cast<std::uint16_t>(i == 2 ? 202 : 100 + i)));
    ASSERT_EQ(rec.last[id].error, Error::ok);
  }
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].dgid, remote_gid(2));
  EXPECT_EQ(changes[0].sgid, port_gid());
  EXPECT_EQ(changes[0].pkey, Pkey{0xFFFF});
  EXPECT_EQ(changes[0].old_dlid, Lid{102});
  EXPECT_EQ(changes[0].dlid, Lid{202});
  EXPECT_EQ(changes[0].old_state, EntryState::stale);
  EXPECT_EQ(changes[0].state, EntryState::valid);

  resolver->on_gid_out_of_service(remote_gid(3));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].dgid, remote_gid(3));
  EXPECT_EQ(changes[1].old_state, EntryState::valid);
  EXPECT_EQ(changes[1].state, EntryState::gone);
  EXPECT_EQ(changes[1].dlid, Lid{});

  resolve_gid(remote_gid(1), forced());
  fail(*sink.open_for(remote_gid(1)), Error::no_record);  // the SA no longer knows it
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].dgid, remote_gid(1));
  EXPECT_EQ(changes[2].old_dlid, Lid{101});
  EXPECT_EQ(changes[2].state, EntryState::failed);
}

TEST_F(ResolverEventsTest, LinkDownFailsEveryRequestAtOnceKeepsTheCacheAndServesItWhenBack) {
  populate(1);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, false, true});
  RequestId cached = resolve_gid(remote_gid(1));
  RequestId uncached = resolve_gid(remote_gid(2));
  EXPECT_EQ(rec.last[cached].error, Error::unreachable);  // at once, not at a deadline
  EXPECT_EQ(rec.last[uncached].error, Error::unreachable);
  EXPECT_FALSE(sink.open_for(remote_gid(2)));
  EXPECT_EQ(resolver->stats().entries, 1u);

  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  RequestId back = resolve_gid(remote_gid(1), cache_only());
  EXPECT_EQ(rec.last[back].error, Error::ok);
}

TEST_F(ResolverEventsTest, StoreObserverSeesEveryValidPathRevalidationIncludedBeforeItsCompletion) {
  std::vector<PathStored> stored;
  std::vector<RequestId> completed_before;
  resolver->set_store_observer([&](const PathStored& s) {
    stored.push_back(s);
    completed_before.push_back(rec.order.empty() ? 0 : rec.order.back());
  });
  RequestId first = resolve_gid(remote_gid(1));
  answer(*sink.open_for(remote_gid(1)), good_path(remote_gid(1), 101));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].dgid, remote_gid(1));
  EXPECT_EQ(stored[0].sgid, port_gid());
  EXPECT_EQ(stored[0].pkey, Pkey{0xFFFF});
  EXPECT_EQ(stored[0].path.dlid, Lid{101});
  EXPECT_EQ(stored[0].produced, clock.now());
  EXPECT_EQ(completed_before[0], 0u);  // the mirror has the path before its requester hears of it
  EXPECT_EQ(rec.last[first].error, Error::ok);

  resolve_gid(remote_gid(1), forced());  // same DLID: no PathChange, but a new produced time
  answer(*sink.open_for(remote_gid(1)), good_path(remote_gid(1), 101));
  EXPECT_EQ(stored.size(), 2u);

  resolve_gid(remote_gid(2));
  fail(*sink.open_for(remote_gid(2)), Error::no_record);
  EXPECT_EQ(stored.size(), 2u);  // failures store nothing
}

TEST_F(ResolverEventsTest, RequestIdsStartWhereTheFrontEndSays) {
  resolver = std::make_unique<Resolver>(policy, clock, sink, 42);
  resolver->use_request_ids_from(RequestId{7} << 56);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  RequestId a = resolve_gid(remote_gid(1));
  RequestId b = resolve_gid(remote_gid(2));
  EXPECT_EQ(a >> 56, 7u);
  EXPECT_EQ(b, a + 1);
  EXPECT_TRUE(resolver->cancel(a));
  EXPECT_EQ(rec.last[a].error, Error::cancelled);
}

}  // namespace
}  // namespace ibat::core::testing
