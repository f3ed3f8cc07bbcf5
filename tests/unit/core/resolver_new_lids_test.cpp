// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver after an SM restart that moved the LIDs (the own port's LID changed): a request on a
// stale entry waits for its revalidation instead of getting the old DLID, entries in use are
// revalidated first, the stale path is the fall-back at the request's deadline, and a same-LID
// restart still serves stale entries at once (docs/design.md §3).
#include <algorithm>

#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

class ResolverNewLidsTest : public ResolverFilledTest {
 protected:
  // What the daemon sees after `sm restart --new-lids`: the own LID moves (1 -> 9), then the SM change.
  void restart_with_new_lids() {
    resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
    resolver->on_sm_changed();
  }
  std::size_t sent_for(const Gid& dgid) const {
    return static_cast<std::size_t>(
        std::count_if(sink.sent.begin(), sink.sent.end(), [&](const PathQuery& q) { return q.dgid == dgid; }));
  }
};

TEST_F(ResolverNewLidsTest, StaleEntryWaitsForTheRevalidationAndGetsTheNewDlid) {
  populate(2);
  restart_with_new_lids();
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(id), 0);  // not the old DLID at once
  auto q = sink.open_for(remote_gid(1));
  ASSERT_TRUE(q);  // asked at once, ahead of the jittered revalidation schedule
  answer(*q, good_path(remote_gid(1), 55, 9));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].state, EntryState::valid);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{55});
  EXPECT_EQ(rec.last[id].path.slid, Lid{9});
  Stats s = resolver->stats();
  EXPECT_EQ(s.stale_holds, 1u);
  EXPECT_EQ(s.stale_fallbacks, 0u);
  EXPECT_EQ(s.stale_hits, 0u);
  EXPECT_EQ(s.failures, 0u);
  // Requests for the same entry while its query is out join it: one query.
  RequestId again = resolve_gid(remote_gid(2)), more = resolve_gid(remote_gid(2));
  EXPECT_EQ(sent_for(remote_gid(2)), 2u);  // the first fill and one revalidation
  answer(*sink.open_for(remote_gid(2)), good_path(remote_gid(2), 56, 9));
  EXPECT_EQ(rec.last[again].path.dlid, Lid{56});
  EXPECT_EQ(rec.last[more].path.dlid, Lid{56});
}

TEST_F(ResolverNewLidsTest, EntriesInUseAreRevalidatedBeforeIdleOnes) {
  policy.revalidate_per_s = 1;
  policy.revalidate_jitter = 0ms;
  reset();
  populate(3);  // the schedule, most recently used first: 3, 2, 1
  const std::size_t before = sink.sent.size();
  restart_with_new_lids();
  resolve_gid(remote_gid(1));  // least recently used: last in the schedule
  ASSERT_GT(sink.sent.size(), before);
  EXPECT_EQ(sink.sent[before].dgid, remote_gid(1));
  answer(sink.sent[before], good_path(remote_gid(1), 51, 9));
  // The schedule then revalidates the idle ones and does not ask again for the fresh one.
  for (int step = 0; step < 400; ++step) {
    advance(10ms);
    for (const PathQuery& q : sink.sent)
      if (sink.open.contains(q.id)) answer(q, good_path(*q.dgid, 50, 9));
  }
  EXPECT_EQ(sink.sent.size(), before + 3);
  EXPECT_EQ(sent_for(remote_gid(1)), 2u);
  for (const auto& e : resolver->entries()) EXPECT_EQ(e.state, EntryState::valid);
}

TEST_F(ResolverNewLidsTest, HeldRequestGetsTheStalePathAtItsDeadlineIfNoAnswerComes) {
  populate(1);
  restart_with_new_lids();
  RequestId id = resolve_gid(remote_gid(1), with_timeout(300ms));
  ASSERT_TRUE(sink.open_for(remote_gid(1)));
  run_for(299ms, 1ms);
  EXPECT_EQ(rec.times(id), 0);
  run_for(2ms, 1ms);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);  // never a failure for a destination that exists
  EXPECT_EQ(rec.last[id].state, EntryState::stale);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
  EXPECT_EQ(resolver->stats().stale_fallbacks, 1u);
  EXPECT_EQ(resolver->stats().failures, 0u);
}

TEST_F(ResolverNewLidsTest, HeldRequestGetsTheStalePathWhenTheSaGivesUp) {
  policy.retry_count = 0;
  reset();
  populate(1);
  restart_with_new_lids();
  RequestId id = resolve_gid(remote_gid(1));
  fail(*sink.open_for(remote_gid(1)), Error::timeout);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
  // While the failed revalidation backs off, nothing is held: no query would come.
  RequestId next = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.times(next), 1);
  EXPECT_EQ(rec.last[next].path.dlid, Lid{101});
  EXPECT_EQ(resolver->stats().stale_fallbacks, 2u);
  EXPECT_EQ(resolver->stats().failures, 0u);
}

TEST_F(ResolverNewLidsTest, HeldRequestForADestinationTheSaNoLongerKnowsIsUnreachable) {
  populate(1);
  restart_with_new_lids();
  RequestId id = resolve_gid(remote_gid(1));
  fail(*sink.open_for(remote_gid(1)), Error::no_record);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].error, Error::unreachable);
}

TEST_F(ResolverNewLidsTest, SameLidSmRestartServesStaleAtOnce) {
  populate(2);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  resolver->on_sm_changed();
  RequestId id = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].state, EntryState::stale);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
  EXPECT_EQ(resolver->stats().stale_holds, 0u);
}

TEST_F(ResolverNewLidsTest, PathAnsweredWithTheNewLidsBeforeTheLidChangeIsNotHeld) {
  populate(1);
  resolver->on_sm_changed();
  run_for(policy.revalidate_jitter + 10ms, 10ms);
  answer(*sink.open_for(remote_gid(1)), good_path(remote_gid(1), 55, 9));  // the new SM's answer
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});  // noticed later
  RequestId id = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{55});
}

TEST_F(ResolverNewLidsTest, CacheOnlyRequestGetsTheStalePathAtOnce) {
  populate(1);
  restart_with_new_lids();
  RequestId id = resolve_gid(remote_gid(1), cache_only());
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
}

TEST_F(ResolverNewLidsTest, ResolveByLidIsAnsweredWithTheLidAskedFor) {
  populate(1);
  restart_with_new_lids();
  // Held for the GID's fresh path, it would get another DLID than the one it asked for.
  RequestId id = resolve_target(Lid{101});
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{101});
}

TEST_F(ResolverNewLidsTest, QueryInFlightAcrossTheLidChangeIsAskedAgain) {
  RequestId id = resolve_gid(remote_gid(1));
  PathQuery old = sink.sent.back();
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  EXPECT_TRUE(sink.cancelled.contains(old.id));
  answer(old, good_path(remote_gid(1), 101));  // the old SM's view: ignored
  EXPECT_EQ(rec.times(id), 0);
  auto fresh = sink.open_for(remote_gid(1));
  ASSERT_TRUE(fresh);
  answer(*fresh, good_path(remote_gid(1), 55, 9));
  EXPECT_EQ(rec.last[id].path.dlid, Lid{55});
}

}  // namespace
}  // namespace ibat::core::testing
