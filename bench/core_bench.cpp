// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench-core: cost of the core Resolver. Cache hit on 100k entries against a bare
// std::unordered_map lookup of the same keys in the same order (ratio printed at the end),
// miss -> query -> completion, SM-change revalidation of 100k entries, and bytes per cached
// entry (malloc delta, reported as a counter).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <unordered_map>
#include <vector>

#include "core/path_cache.h"
#include "core/resolver.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kEntries = 100'000;

Gid local_gid() { return Gid::from_parts(0xFE80'0000'0000'0000ULL, 0x0002'C903'0000'0001ULL); }
Gid remote(std::uint64_t n) { return Gid::from_parts(0xFE80'0000'0000'0000ULL, 0x0002'C903'1000'0000ULL + n); }

PathRecord path_to(const Gid& dgid, std::uint64_t n) {
  PathRecord p;
  p.dgid = dgid;
  p.sgid = local_gid();
  p.dlid = Lid{static_cast<std::uint16_t>(1 + n % 0xBFF0)};
  p.slid = Lid{1};
  p.pkey = Pkey{0xFFFF};
  p.mtu = 4;
  p.rate = 16;
  p.sl = 1;
  p.pkt_life = 18;
  return p;
}

// Collects queries; the benchmark answers them.
struct CollectingSink : QuerySink {
  void send_path_query(const PathQuery& q) override { queries.push_back(q); }
  std::vector<PathQuery> queries;
};

Policy fast_policy() {
  Policy p;
  p.capacity = kEntries;
  p.sa_max_inflight = 65'535;
  p.sa_rate = 1e6;
  p.sa_burst = 1'000'000;
  p.revalidate_per_s = 1e6;
  p.revalidate_jitter = 0s;
  return p;
}

// A Resolver holding kEntries valid entries.
struct LoadedResolver {
  LoadedResolver() : resolver(fast_policy(), clock, sink) {
    resolver.on_local_port({local_gid(), Lid{1}, Lid{100}, true});
    for (std::uint64_t n = 0; n < kEntries; ++n) {
      ResolveRequest req;
      req.target = remote(n);
      resolver.resolve(req, nullptr);
      answer_all();
      clock.advance(1us);
    }
  }
  void answer_all() {
    std::vector<PathQuery> batch;
    batch.swap(sink.queries);
    for (const PathQuery& q : batch)
      resolver.on_query_result(q.id, {Error::ok, path_to(*q.dgid, q.id)});
  }
  ManualClock clock;
  CollectingSink sink;
  Resolver resolver;
};

// The same random access order for the cache and the bare map.
const std::vector<Gid>& access_order() {
  static const std::vector<Gid> order = [] {
    std::vector<Gid> v;
    for (std::uint64_t n = 0; n < kEntries; ++n) v.push_back(remote(n));
    std::shuffle(v.begin(), v.end(), std::mt19937_64(7));
    return v;
  }();
  return order;
}

LoadedResolver& shared_loaded() {
  static LoadedResolver loaded;
  return loaded;
}

void BM_CacheHit100k(benchmark::State& state) {
  LoadedResolver& l = shared_loaded();
  const auto& order = access_order();
  std::uint64_t served = 0;
  Completion done = [&served](RequestId, const ResolveResult& r) { served += r.path.dlid.value; };
  std::size_t i = 0;
  ResolveRequest req;
  const std::uint64_t misses_before = l.resolver.stats().misses;
  for (auto _ : state) {
    req.target = order[i];
    l.resolver.resolve(req, done);
    if (++i == order.size()) i = 0;
  }
  benchmark::DoNotOptimize(served);
  if (l.resolver.stats().misses != misses_before) state.SkipWithError("cache hit benchmark missed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheHit100k);

struct KeyHasher {
  std::size_t operator()(const PathKey& k) const { return hash_value(k); }
};

void BM_BareUnorderedMap100k(benchmark::State& state) {
  std::unordered_map<PathKey, PathRecord, KeyHasher> map;
  for (std::uint64_t n = 0; n < kEntries; ++n) map.emplace(PathKey{local_gid(), remote(n), Pkey{0xFFFF}, {}}, path_to(remote(n), n));
  const auto& order = access_order();
  std::uint64_t served = 0;
  std::size_t i = 0;
  for (auto _ : state) {
    auto it = map.find(PathKey{local_gid(), order[i], Pkey{0xFFFF}, {}});
    served += it->second.dlid.value;
    if (++i == order.size()) i = 0;
  }
  benchmark::DoNotOptimize(served);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BareUnorderedMap100k);

void BM_MissQueryCompletion(benchmark::State& state) {
  ManualClock clock;
  CollectingSink sink;
  Resolver resolver(fast_policy(), clock, sink);
  resolver.on_local_port({local_gid(), Lid{1}, Lid{100}, true});
  std::uint64_t n = 0, completed = 0;
  Completion done = [&completed](RequestId, const ResolveResult& r) { completed += r.error == Error::ok; };
  ResolveRequest req;
  for (auto _ : state) {
    req.target = remote(n++);
    resolver.resolve(req, done);
    const PathQuery q = sink.queries.back();
    sink.queries.clear();
    resolver.on_query_result(q.id, {Error::ok, path_to(*q.dgid, n)});
    clock.advance(1us);  // keeps the token bucket (1e6/s) supplied
  }
  if (completed != static_cast<std::uint64_t>(state.iterations())) state.SkipWithError("not every request completed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MissQueryCompletion);

// One iteration: SM change, then drive ticks (1 ms of simulated time each) and answer every
// revalidation query until all 100k entries are valid again.
void BM_SmChangeRevalidation100k(benchmark::State& state) {
  auto loaded = std::make_unique<LoadedResolver>();
  for (auto _ : state) {
    std::uint64_t before = loaded->resolver.stats().revalidations;
    loaded->resolver.on_sm_changed();
    while (loaded->resolver.stats().revalidations - before < kEntries || !loaded->sink.queries.empty()) {
      loaded->clock.advance(1ms);
      loaded->resolver.tick();
      loaded->answer_all();
    }
  }
  Stats s = loaded->resolver.stats();
  if (s.failures != 0) state.SkipWithError("revalidation failed requests");
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kEntries));
  state.counters["entries"] = static_cast<double>(s.entries);
}
BENCHMARK(BM_SmChangeRevalidation100k)->Unit(benchmark::kMillisecond)->Iterations(5);

// Heap bytes held per cached entry once 100k entries are loaded (whole Resolver, all indexes).
void BM_BytesPerEntry(benchmark::State& state) {
  double per_entry = 0;
  for (auto _ : state) {
    std::size_t before = mallinfo2().uordblks;
    auto loaded = std::make_unique<LoadedResolver>();
    std::size_t after = mallinfo2().uordblks;
    per_entry = static_cast<double>(after - before) / static_cast<double>(loaded->resolver.stats().entries);
  }
  state.counters["bytes_per_entry"] = per_entry;
  state.counters["sizeof_CacheEntry"] = sizeof(CacheEntry);
}
BENCHMARK(BM_BytesPerEntry)->Unit(benchmark::kMillisecond)->Iterations(1);

// Console output plus a summary line comparing the cache hit with the bare map (CPU time, which
// is steadier than wall time on a shared machine).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration) ns_per_op_[r.benchmark_name()] = r.GetAdjustedCPUTime();
    ConsoleReporter::ReportRuns(runs);
  }
  void print_summary() const {
    auto hit = ns_per_op_.find("BM_CacheHit100k"), bare = ns_per_op_.find("BM_BareUnorderedMap100k");
    if (hit == ns_per_op_.end() || bare == ns_per_op_.end()) return;
    std::printf("summary: cache hit %.1f ns CPU, bare unordered_map %.1f ns CPU, ratio %.2f (target <= 2.00)\n",
                hit->second, bare->second, hit->second / bare->second);
  }

 private:
  std::map<std::string, double> ns_per_op_;
};

}  // namespace
}  // namespace ibat::core

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ibat::core::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary();
  benchmark::Shutdown();
  return 0;
}
