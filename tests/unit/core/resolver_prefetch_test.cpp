// Resolver prefetch and bulk revalidation (Policy::prefetch): one GetTable when the port becomes
// usable and after each SM change or own LID move fills and refreshes the cache, the GET
// revalidation schedule waits for it, requests that wait now still get their GET, and a table the
// sink cannot send or the SA does not answer leaves everything to GETs as before.
#include <algorithm>

#include "core/backoff.h"
#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

class ResolverPrefetchTest : public ResolverFilledTest {
 protected:
  ResolverPrefetchTest() {
    sink.tables = true;
    reset();
  }
  // The paths from SLID `slid` to remote_gid(first..last), DLID base + i.
  static std::vector<PathRecord> subnet(std::uint64_t first, std::uint64_t last, std::uint16_t base,
                                        std::uint16_t slid = 1) {
    std::vector<PathRecord> paths;
    for (std::uint64_t i = first; i <= last; ++i)
      paths.push_back(good_path(remote_gid(i), static_cast<std::uint16_t>(base + i), slid));
    return paths;
  }
  const TableQuery& last_table() const { return sink.tables_sent.back(); }
  void answer_table(const TableQuery& q, std::vector<PathRecord> paths) {
    resolver->on_table_result(q.id, TableResult{Error::ok, std::move(paths), ""});
  }
  std::size_t gets_for(const Gid& dgid) const {
    return static_cast<std::size_t>(
        std::count_if(sink.sent.begin(), sink.sent.end(), [&](const PathQuery& q) { return q.dgid == dgid; }));
  }
  std::optional<CacheEntryView> entry(const Gid& dgid) const {
    for (const CacheEntryView& e : resolver->entries())
      if (e.dgid == dgid) return e;
    return std::nullopt;
  }
};

TEST_F(ResolverPrefetchTest, TheFirstPortReportAsksTheSubnetAndRequestsThenHit) {
  ASSERT_EQ(sink.tables_sent.size(), 1u);
  EXPECT_EQ(last_table().sgid, port_gid());
  EXPECT_EQ(last_table().pkey, Pkey{0xFFFF});
  answer_table(last_table(), subnet(1, 3, 100));
  for (std::uint64_t i = 1; i <= 3; ++i) {
    RequestId id = resolve_gid(remote_gid(i));
    ASSERT_EQ(rec.times(id), 1);
    EXPECT_EQ(rec.last[id].state, EntryState::valid);
    EXPECT_EQ(rec.last[id].path.dlid, Lid{static_cast<std::uint16_t>(100 + i)});
  }
  EXPECT_TRUE(sink.sent.empty());  // no GET at all
  Stats s = resolver->stats();
  EXPECT_EQ(s.sa_tables, 1u);
  EXPECT_EQ(s.sa_tables_answered, 1u);
  EXPECT_EQ(s.table_paths, 3u);
  EXPECT_EQ(s.cache_hits, 3u);
  EXPECT_EQ(s.sa_queries, 0u);
}

TEST_F(ResolverPrefetchTest, AnLidMoveAndAnSmChangeInOnePollAskOneTable) {
  answer_table(last_table(), {});
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  resolver->on_sm_changed();
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "not before tick()";
  ASSERT_TRUE(resolver->next_wakeup());
  EXPECT_LE(*resolver->next_wakeup(), clock.now());
  resolver->tick();
  EXPECT_EQ(sink.tables_sent.size(), 2u);
  EXPECT_TRUE(sink.cancelled.empty());
}

TEST_F(ResolverPrefetchTest, OffSendsNoTable) {
  policy.prefetch = Prefetch::off;
  sink.tables_sent.clear();
  reset();
  resolver->on_sm_changed();
  resolver->tick();
  EXPECT_TRUE(sink.tables_sent.empty());
  EXPECT_EQ(resolver->stats().sa_tables, 0u);
}

TEST_F(ResolverPrefetchTest, ASinkWithoutTablesRevalidatesByGetAsBefore) {
  sink.tables = false;
  reset();
  populate(3);
  const std::size_t before = sink.sent.size();
  resolver->on_sm_changed();
  resolver->tick();
  run_for(3s, 10ms);
  EXPECT_EQ(sink.sent.size(), before + 3);  // each entry revalidated by its GET
  EXPECT_EQ(resolver->stats().sa_tables, 0u);
  EXPECT_EQ(resolver->stats().sa_tables_failed, 0u);
}

TEST_F(ResolverPrefetchTest, AnSmChangeIsRevalidatedByOneTableAndGetsOnlyWhatItLacks) {
  answer_table(last_table(), {});
  populate(3);
  std::vector<PathChange> changes;
  resolver->set_path_observer([&](const PathChange& c) { changes.push_back(c); });
  const std::size_t gets = sink.sent.size();
  resolver->on_sm_changed();
  resolver->tick();
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  run_for(5s, 10ms);
  EXPECT_EQ(sink.sent.size(), gets);  // the GET schedule waits for the table
  // A request on a stale entry is served at once and asks no GET of its own meanwhile.
  RequestId id = resolve_gid(remote_gid(2));
  EXPECT_EQ(rec.last[id].state, EntryState::stale);
  EXPECT_EQ(sink.sent.size(), gets);
  answer_table(last_table(), subnet(1, 2, 200));  // remote 3 is not in it
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].old_dlid, Lid{101});
  EXPECT_EQ(changes[0].dlid, Lid{201});
  EXPECT_EQ(entry(remote_gid(1))->state, EntryState::valid);
  EXPECT_EQ(entry(remote_gid(3))->state, EntryState::stale);
  run_for(3s, 10ms);
  EXPECT_EQ(sink.sent.size(), gets + 1);  // the one the table lacked
  EXPECT_EQ(sink.sent.back().dgid, remote_gid(3));
  EXPECT_EQ(resolver->stats().revalidations, 1u);
}

TEST_F(ResolverPrefetchTest, ARequestHeldAfterNewLidsGetsItsGetAndTheTableMayAnswerItFirst) {
  answer_table(last_table(), {});
  populate(2);
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  resolver->on_sm_changed();
  resolver->tick();
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(id), 0);  // held: its path carries old LIDs
  auto get = sink.open_for(remote_gid(1));
  ASSERT_TRUE(get);  // asked now, not after the table
  answer_table(last_table(), subnet(1, 2, 300, 9));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{301});
  EXPECT_EQ(rec.last[id].path.slid, Lid{9});
  EXPECT_TRUE(sink.cancelled.contains(get->id));  // the GET is no longer needed
  answer(*get, good_path(remote_gid(1), 301, 9));  // a late answer changes nothing
  EXPECT_EQ(rec.times(id), 1);
  EXPECT_EQ(resolver->stats().failures, 0u);
}

TEST_F(ResolverPrefetchTest, AnUnansweredTableIsAskedAgainWithBackoffThenLeftToGets) {
  policy.retry_count = 2;
  policy.retry_jitter = 0;
  sink.tables_sent.clear();
  reset();
  answer_table(last_table(), {});
  populate(3);
  const std::size_t gets = sink.sent.size();
  resolver->on_sm_changed();
  resolver->tick();
  for (std::uint32_t attempt = 1; attempt <= 2; ++attempt) {
    const std::size_t tables = sink.tables_sent.size();
    resolver->on_table_result(last_table().id, TableResult{Error::timeout, {}, "the SA never answered"});
    const Duration backoff = backoff_nominal(policy, attempt);
    ASSERT_TRUE(resolver->next_wakeup());
    EXPECT_EQ(*resolver->next_wakeup(), clock.now() + backoff);
    advance(backoff - 1ms);
    EXPECT_EQ(sink.tables_sent.size(), tables);
    advance(1ms);
    ASSERT_EQ(sink.tables_sent.size(), tables + 1) << "asked again after " << attempt << " timeout(s)";
    EXPECT_EQ(sink.sent.size(), gets) << "the GETs still wait for it";
  }
  resolver->on_table_result(last_table().id, TableResult{Error::timeout, {}, "the SA never answered"});
  // The lost table halved the pacer's window: one GET at a time, each answered.
  for (int step = 0; step < 300; ++step) {
    advance(10ms);
    for (std::uint64_t i = 1; i <= 3; ++i)
      if (auto q = sink.open_for(remote_gid(i))) answer(*q, good_path(remote_gid(i), static_cast<std::uint16_t>(110 + i)));
  }
  EXPECT_EQ(sink.sent.size(), gets + 3);
  EXPECT_EQ(entry(remote_gid(3))->path.dlid, Lid{113});
  EXPECT_EQ(resolver->stats().sa_tables_failed, 1u);
  EXPECT_EQ(resolver->stats().sa_tables_answered, 1u);  // the first one
}

TEST_F(ResolverPrefetchTest, ARefusedTableLeavesTheRevalidationToGetsAtOnce) {
  answer_table(last_table(), {});
  populate(2);
  const std::size_t tables = sink.tables_sent.size();
  resolver->on_sm_changed();
  resolver->tick();
  resolver->on_table_result(last_table().id, TableResult{Error::invalid, {}, "MAD status 0x000c"});
  run_for(3s, 10ms);
  EXPECT_EQ(sink.tables_sent.size(), tables + 1) << "not asked again";
  EXPECT_EQ(resolver->stats().sa_tables_failed, 1u);
  EXPECT_GE(sink.sent.size(), 3u);  // the two fills and at least one revalidation GET
}

TEST_F(ResolverPrefetchTest, ATableNeverPushesOutAnEntry) {
  policy.capacity = 2;
  sink.tables_sent.clear();
  reset();
  answer_table(last_table(), {});
  populate(2);
  resolver->on_sm_changed();
  resolver->tick();
  answer_table(last_table(), subnet(1, 5, 400));
  std::vector<CacheEntryView> all = resolver->entries();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(entry(remote_gid(1))->path.dlid, Lid{401});
  EXPECT_EQ(entry(remote_gid(2))->path.dlid, Lid{402});
  EXPECT_EQ(resolver->stats().table_skipped, 3u);
  EXPECT_EQ(resolver->stats().evictions, 0u);
}

TEST_F(ResolverPrefetchTest, PrefetchedEntriesAreEvictedBeforeEntriesInUse) {
  policy.capacity = 3;
  sink.tables_sent.clear();
  reset();
  populate(1);
  answer_table(last_table(), subnet(2, 3, 500));
  resolve_gid(remote_gid(4));  // a new destination: the room comes from a prefetched entry
  answer(*sink.open_for(remote_gid(4)), good_path(remote_gid(4), 504));
  EXPECT_TRUE(entry(remote_gid(1)));
  EXPECT_TRUE(entry(remote_gid(4)));
  EXPECT_EQ(resolver->stats().evictions, 1u);
}

TEST_F(ResolverPrefetchTest, AnAnswerFromBeforeTheLastSmChangeIsIgnored) {
  const TableQuery first = last_table();
  resolver->on_sm_changed();
  resolver->tick();
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  EXPECT_TRUE(sink.cancelled.contains(first.id));
  answer_table(first, subnet(1, 2, 600));
  EXPECT_TRUE(resolver->entries().empty());
  answer_table(last_table(), subnet(1, 2, 700));
  EXPECT_EQ(entry(remote_gid(2))->path.dlid, Lid{702});
  EXPECT_EQ(resolver->stats().sa_tables_answered, 1u);
}

TEST_F(ResolverPrefetchTest, APortDownDuringTheTableAsksAgainOnceUp) {
  const TableQuery first = last_table();
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, false});
  resolver->tick();
  EXPECT_TRUE(sink.cancelled.contains(first.id));
  EXPECT_EQ(sink.tables_sent.size(), 1u);  // not while down
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  resolver->tick();
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  answer_table(last_table(), subnet(1, 1, 800));
  EXPECT_EQ(entry(remote_gid(1))->state, EntryState::valid);
}

TEST_F(ResolverPrefetchTest, RecordsForAnotherSourceOrNotServableAreLeftOut) {
  std::vector<PathRecord> paths = subnet(1, 3, 900);
  paths[0].sgid = remote_gid(77);
  paths[1].dlid = Lid{0};
  answer_table(last_table(), paths);
  EXPECT_EQ(resolver->entries().size(), 1u);
  EXPECT_EQ(resolver->stats().table_skipped, 2u);
  EXPECT_EQ(resolver->stats().table_paths, 1u);
}

TEST_F(ResolverPrefetchTest, TurningPrefetchOffWhileATableIsOutResumesTheGets) {
  answer_table(last_table(), {});
  populate(2);
  const std::size_t gets = sink.sent.size();
  resolver->on_sm_changed();
  resolver->tick();
  policy.prefetch = Prefetch::off;
  resolver->set_policy(policy);
  run_for(3s, 10ms);
  EXPECT_EQ(sink.sent.size(), gets + 2);
}

}  // namespace
}  // namespace ibat::core::testing
