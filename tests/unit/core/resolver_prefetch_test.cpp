// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
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
  // Our LIDs move with an SM change; the GETs go unanswered. How long until the next table goes,
  // advancing by `step` (at most 10 s).
  Duration time_to_table_after_new_lids(Duration step) {
    resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
    resolver->on_sm_changed();
    const TimePoint changed = clock.now();
    resolver->tick();
    while (sink.tables_sent.size() == 1u && clock.now() - changed < 10s) advance(step);
    return clock.now() - changed;
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

// The paths in use go by GET at once; the table waits for a probe that finds the SA's queue
// short, which their GETs make long.
TEST_F(ResolverPrefetchTest, AfterNewLidsThePathsInUseGoByGetAheadOfTheTable) {
  answer_table(last_table(), {});
  populate(2);
  sink.probes = true;
  const std::size_t gets = sink.sent.size();
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  resolver->on_sm_changed();
  resolver->tick();
  // Both paths were used just now: each asked by GET at once, before any request and the table.
  ASSERT_EQ(sink.sent.size(), gets + 2);
  EXPECT_EQ(sink.tables_sent.size(), 1u);
  ASSERT_EQ(sink.probes_sent.size(), 1u);  // a subnet of unknown size: its probe at once
  EXPECT_EQ(sink.probes_sent[0].dgid, std::optional<Gid>{port_gid()});
  RequestId id = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.times(id), 0);  // held: its path carries old LIDs
  auto get1 = sink.open_for(remote_gid(1));
  auto get2 = sink.open_for(remote_gid(2));
  ASSERT_TRUE(get1 && get2);
  EXPECT_EQ(sink.sent.size(), gets + 2);  // the held request joined its GET
  advance(100ms);  // the probe waited behind them
  answer(sink.probes_sent[0], good_path(port_gid(), 9, 9));
  answer(*get1, good_path(remote_gid(1), 301, 9));
  answer(*get2, good_path(remote_gid(2), 302, 9));
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.dlid, Lid{301});
  run_for(49ms, 1ms);
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "the next probe at least half the queue it saw away";
  EXPECT_EQ(sink.probes_sent.size(), 1u);
  for (int ms = 50; ms <= 150 && sink.probes_sent.size() == 1u; ++ms) advance(1ms);
  ASSERT_EQ(sink.probes_sent.size(), 2u);
  answer(sink.probes_sent[1], good_path(port_gid(), 9, 9));  // the queue is gone
  resolver->tick();
  ASSERT_EQ(sink.tables_sent.size(), 2u);  // the rest of the subnet by the table, now
  EXPECT_EQ(resolver->stats().sa_probes, 2u);
  EXPECT_EQ(resolver->stats().sa_queries, 2u + gets) << "a probe is no path query";
  EXPECT_EQ(resolver->stats().failures, 0u);
}

// A subnet whose size is known holds its table's first probe for the in-use window (here 500 x 2
// GETs of 6 paths at 250,000 paths/s, x 1.5: 36 ms), then draws it within the subnet's probe
// window (500 x 1 ms).
TEST_F(ResolverPrefetchTest, WithTheSubnetsSizeKnownTheTableWaitsForTheInUseWindowAndItsProbe) {
  answer_table(last_table(), subnet(1, 500, 100));
  for (std::uint64_t i = 1; i <= 2; ++i) ASSERT_EQ(rec.times(resolve_gid(remote_gid(i))), 1);
  advance(1ms);
  const std::size_t gets = sink.sent.size();
  const Duration waited = time_to_table_after_new_lids(1ms);
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  EXPECT_GE(sink.sent.size(), gets + 1) << "the paths in use went first, by GET";
  EXPECT_GE(waited, 36ms);
  EXPECT_LE(waited, 36ms + 500ms + 1ms);
}

TEST_F(ResolverPrefetchTest, APathNotUsedForAMinuteWaitsForTheTableAfterNewLids) {
  answer_table(last_table(), {});
  populate(2);
  advance(61s);
  resolve_gid(remote_gid(3));
  answer(sink.sent.back(), good_path(remote_gid(3), 103));
  advance(1s);
  const std::size_t gets = sink.sent.size();
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  resolver->on_sm_changed();
  resolver->tick();
  ASSERT_EQ(sink.sent.size(), gets + 1);  // only the path used within the minute
  EXPECT_EQ(sink.sent.back().dgid, remote_gid(3));
  answer(sink.sent.back(), good_path(remote_gid(3), 303, 9));
  resolver->tick();
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  answer_table(last_table(), subnet(1, 3, 300, 9));
  run_for(5s, 10ms);
  EXPECT_EQ(sink.sent.size(), gets + 1);  // the table renewed the other two
  EXPECT_EQ(entry(remote_gid(1))->path.dlid, Lid{301});
}

TEST_F(ResolverPrefetchTest, PathsOnlyATableBroughtAreNotInUseAfterNewLids) {
  answer_table(last_table(), subnet(1, 3, 100));
  advance(1s);
  resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
  resolver->on_sm_changed();
  run_for(5ms, 1ms);  // the table gate's first probe, within 3 x 1 ms
  EXPECT_EQ(sink.sent.size(), 0u);  // no request used them: the next table renews them all
  EXPECT_EQ(sink.tables_sent.size(), 2u);
}

// The delay of the table after an SM change, for one Resolver with `seed` that learnt a subnet of
// `subnet_size` end ports from its first table.
Duration table_delay_after_sm_change(std::uint64_t seed, std::size_t subnet_size) {
  Policy policy;
  ManualClock clock;
  FakeSink sink;
  sink.tables = true;
  Resolver resolver(policy, clock, sink, seed);
  resolver.on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  resolver.tick();
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "a subnet it knows nothing of: at once";
  std::vector<PathRecord> paths;
  for (std::size_t i = 1; i <= subnet_size; ++i)
    paths.push_back(good_path(remote_gid(i), static_cast<std::uint16_t>(100 + i)));
  resolver.on_table_result(sink.tables_sent.back().id, TableResult{Error::ok, std::move(paths), ""});
  resolver.on_sm_changed();
  const TimePoint changed = clock.now();
  for (int step = 0; step < 1000 && sink.tables_sent.size() == 1u; ++step) {
    const std::optional<TimePoint> wake = resolver.next_wakeup();
    if (!wake) break;
    clock.advance(std::max(*wake - clock.now(), Duration{1}));
    resolver.tick();
  }
  EXPECT_EQ(sink.tables_sent.size(), 2u);
  return clock.now() - changed;
}

// A subnet's tables follow their first probes, spread over 1 ms an end port (a sink that cannot
// probe opens the gate at its first probe).
TEST(ResolverTableSpread, ASubnetsFirstProbesAreSpreadOverItsSize) {
  Duration lo = Duration::max(), hi = Duration::zero();
  for (std::uint64_t seed = 1; seed <= 32; ++seed) {
    const Duration d = table_delay_after_sm_change(seed, 2000);
    EXPECT_LE(d, 2s + 1ms);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_LT(lo, 500ms);
  EXPECT_GT(hi, 1500ms);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) EXPECT_LE(table_delay_after_sm_change(seed, 700), 700ms + 1ms);
}

TEST_F(ResolverPrefetchTest, AWarmCacheSpreadsTheFirstTable) {
  answer_table(last_table(), subnet(1, 1500, 100));
  std::vector<CacheEntryView> snapshot = resolver->entries();
  ASSERT_EQ(snapshot.size(), 1500u);
  Duration lo = Duration::max(), hi = Duration::zero();
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    sink.tables_sent.clear();
    resolver = std::make_unique<Resolver>(policy, clock, sink, seed);
    resolver->load_stale(snapshot);  // 1,500 end ports: first probes within 1.5 s
    resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
    const TimePoint start = clock.now();
    while (sink.tables_sent.empty() && clock.now() - start < 10s) advance(10ms);
    ASSERT_EQ(sink.tables_sent.size(), 1u);
    lo = std::min(lo, clock.now() - start);
    hi = std::max(hi, clock.now() - start);
  }
  EXPECT_LE(hi, 1500ms + 10ms);
  EXPECT_GT(hi, 1s);
  EXPECT_LT(lo, 500ms);
}

TEST_F(ResolverPrefetchTest, ExpectedSubnetPortsSpreadTheFirstProbe) {
  sink.tables_sent.clear();
  policy.expected_subnet_ports = 3000;  // within 3 s
  resolver = std::make_unique<Resolver>(policy, clock, sink, 7);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  const TimePoint start = clock.now();
  while (sink.tables_sent.empty() && clock.now() - start < 40s) advance(100ms);
  EXPECT_GT(clock.now() - start, 100ms);  // seed 7's draw is not at the window's start
  EXPECT_LE(clock.now() - start, 3s + 100ms);
}

// A port that knows nothing of its subnet asks its size first (a query that computes no path), and
// its first probe then takes its place in the subnet's probe window: 3,000 LIDs, 3 s.
TEST_F(ResolverPrefetchTest, AnUnknownSubnetIsSizedFirstAndItsFirstTableSpread) {
  sink.sizes = true;
  sink.tables_sent.clear();
  resolver = std::make_unique<Resolver>(policy, clock, sink, 7);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  advance(100ms);
  ASSERT_EQ(sink.sizes_sent.size(), 1u);
  EXPECT_TRUE(sink.tables_sent.empty()) << "the table waits for the size";
  advance(5s);
  EXPECT_TRUE(sink.tables_sent.empty()) << "and keeps waiting while it is in flight";
  EXPECT_EQ(resolver->next_wakeup(), std::nullopt) << "no wake-up spent on it";
  resolver->on_subnet_size(sink.sizes_sent[0].id, SubnetSizeResult{Error::ok, 3000, ""});
  const TimePoint sized = clock.now();
  while (sink.tables_sent.empty() && clock.now() - sized < 40s) advance(100ms);
  ASSERT_EQ(sink.tables_sent.size(), 1u);
  EXPECT_GT(clock.now() - sized, 100ms);  // seed 7's draw is not at the window's start
  EXPECT_LE(clock.now() - sized, 3s + 100ms);
  answer_table(last_table(), subnet(1, 3, 100));
  resolver->on_sm_changed();
  run_for(1s, 100ms);
  EXPECT_EQ(sink.sizes_sent.size(), 1u) << "asked once: the next tables know the size from the last one";
  EXPECT_EQ(sink.tables_sent.size(), 2u);
}

// A silent SA (down, sweeping) is asked the size again after each backoff, as a table would be;
// after retry_count silences, or at once when the SA refuses or the sink cannot ask, the table goes
// unspread, as without the size.
TEST_F(ResolverPrefetchTest, WithoutAnAnswerToTheSizeTheTableGoesUnspread) {
  sink.sizes = true;
  sink.tables_sent.clear();
  resolver = std::make_unique<Resolver>(policy, clock, sink, 7);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  advance(100ms);
  for (std::uint32_t silence = 1; silence <= policy.retry_count; ++silence) {
    ASSERT_EQ(sink.sizes_sent.size(), silence);
    resolver->on_subnet_size(sink.sizes_sent.back().id, SubnetSizeResult{Error::timeout, 0, "no answer"});
    resolver->on_subnet_size(sink.sizes_sent.back().id, SubnetSizeResult{Error::ok, 9000, ""});  // stale: ignored
    advance(100ms);
    EXPECT_EQ(sink.sizes_sent.size(), silence) << "not before the backoff";
    advance(policy.retry_max);
  }
  ASSERT_EQ(sink.sizes_sent.size(), policy.retry_count + 1);
  EXPECT_TRUE(sink.tables_sent.empty());
  resolver->on_subnet_size(sink.sizes_sent.back().id, SubnetSizeResult{Error::timeout, 0, "no answer"});
  advance(100ms);
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "the last silence: the table at the next tick";

  sink.tables_sent.clear();
  sink.sizes_sent.clear();
  resolver = std::make_unique<Resolver>(policy, clock, sink, 7);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  advance(100ms);
  ASSERT_EQ(sink.sizes_sent.size(), 1u);
  resolver->on_subnet_size(sink.sizes_sent[0].id, SubnetSizeResult{Error::invalid, 0, "MAD status 0x000c"});
  advance(100ms);
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "refused: the table at the next tick";

  sink.sizes = false;
  sink.tables_sent.clear();
  resolver = std::make_unique<Resolver>(policy, clock, sink, 7);
  resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
  advance(100ms);
  EXPECT_EQ(sink.tables_sent.size(), 1u) << "a sink that cannot ask: the table at once";
}

// After new LIDs, with a subnet of 100 end ports and 2 paths in use at 1,000 paths/s: the subnet's
// GETs for its paths in use are 100 x 2 x 6 paths of work, 1.2 s; each host asks its own at its
// place in that window, and the tables wait 1.8 s, then spread over 100^2 / 1,000 - 2 s = 8 s.
TEST_F(ResolverPrefetchTest, AfterNewLidsThePathsInUseGoAtTheirPlaceInTheSubnetsWindowAndTheTablesAfter) {
  policy.in_use_window_paths_per_s = 1000;
  Duration first_get = Duration::max(), last_get = Duration::zero();
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    sink.sent.clear();
    sink.tables_sent.clear();
    resolver = std::make_unique<Resolver>(policy, clock, sink, seed);
    resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
    resolver->tick();
    answer_table(last_table(), subnet(1, 100, 100));
    resolve_gid(remote_gid(1));
    resolve_gid(remote_gid(2));
    advance(1s);
    resolver->on_local_port({port_gid(), Lid{9}, Lid{100}, true});
    resolver->on_sm_changed();
    const TimePoint moved = clock.now();
    std::optional<Duration> gets_at, table_at;
    while (!table_at && clock.now() - moved < 12s) {
      resolver->tick();
      if (!gets_at && !sink.sent.empty()) gets_at = clock.now() - moved;
      if (sink.tables_sent.size() == 2u) table_at = clock.now() - moved;
      for (std::uint64_t d = 1; d <= 2; ++d)
        if (auto q = sink.open_for(remote_gid(d))) answer(*q, good_path(remote_gid(d), static_cast<std::uint16_t>(300 + d), 9));
      advance(10ms);
    }
    ASSERT_TRUE(gets_at && table_at) << "seed " << seed;
    EXPECT_EQ(sink.sent.size(), 2u) << "the 2 paths in use, together; no other";
    EXPECT_LE(*gets_at, 1200ms + 10ms);
    EXPECT_GE(*table_at, 1800ms);
    EXPECT_LE(*table_at, 1800ms + 8s + 10ms);
    first_get = std::min(first_get, *gets_at);
    last_get = std::max(last_get, *gets_at);
  }
  EXPECT_LT(first_get, 300ms);  // the hosts' places spread over the window
  EXPECT_GT(last_get, 900ms);
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
