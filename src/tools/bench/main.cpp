// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench: end-to-end figures of a running ibatd through libibat (docs/performance.md):
//   cached_resolves_per_s   pipelined cached resolves on one connection (target >= 300k/s)
//   p50_us, p99_us          one cached resolve at a time (target p99 <= 20 us), and the time
//                           ibatd polled for them instead of sleeping (single.daemon_polled_us_per_resolve)
//   uncached_resolves_per_s FORCE_SA resolves: each one an SA PathRecord round trip made by the
//                           daemon's fabric::SaClient (the path ibat-probe uses), no cache
//   table_resolves_per_s, table_p99_us  resolves libibat answers from the shared path table
//   table_batch_resolves_per_s  the same through ibat_resolve_table, every destination in one call
//   bare_map_per_s          the same keys in a std::unordered_map (the table's baseline)
// and the ratios, all in the same run. Exit 0 when every request succeeded, 1 otherwise, 2 on
// usage errors. scripts/bench.sh starts a lab fabric and ibatd for it.
#include <cstdio>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/bench/measurements.h"
#include "tools/bench/options.h"

namespace {

using namespace ibat::bench;
using nlohmann::json;

constexpr double kCachedTarget = 300'000;  // resolves per second
constexpr double kP99TargetUs = 20;
constexpr double kWarmupSeconds = 0.3;
constexpr int kTableRounds = 10;  // turns of the map / table / table-batch phases

json errors_json(const RunResult& r) {
  json out = json::object();
  for (const auto& [what, n] : r.errors) out[what] = n;
  return out;
}

double round2(double v) { return static_cast<double>(static_cast<long long>(v * 100 + 0.5)) / 100; }

// Resolves every destination once so that the cached runs only hit the cache.
void warm_up(ibat_t* h, const Options& o) {
  for (std::size_t i = 0; i < o.dgids.size(); ++i) {
    ibat_path path{};
    int rc = ibat_resolve_sync(h, &o.dgids[i], nullptr, &path);
    if (rc != IBAT_OK)
      throw std::runtime_error("warm-up resolve of " + o.dgid_text[i] + " failed: " + ibat_strerror(rc) +
                               " (is it a GID of this fabric?)");
  }
  run_pipelined(h, o.dgids, o.depth, 0, kWarmupSeconds, false);
}

// The shared-table run on its own handle `table`, and the unordered_map baseline on the same keys.
void measure_table(ibat_t* table, const Options& o, json& report) {
  std::vector<ibat_path> paths(o.dgids.size());
  for (std::size_t i = 0; i < o.dgids.size(); ++i)
    if (int rc = ibat_resolve_sync(table, &o.dgids[i], nullptr, &paths[i]); rc != IBAT_OK)
      throw std::runtime_error("table warm-up of " + o.dgid_text[i] + " failed: " + ibat_strerror(rc));
  // The baseline and the two table calls take turns in short rounds, so that other load on the
  // machine falls on all three alike and their ratios hold (run one after the other, a change
  // of load between them moved the ratio by a quarter).
  RunResult bare, hits, batch;
  const double round_seconds = o.cached_seconds / kTableRounds;
  for (int round = 0; round < kTableRounds; ++round) {
    bare.add(run_bare_map(o.dgids, paths, round_seconds));
    hits.add(run_table(table, o.dgids, round_seconds));
    batch.add(run_table_batch(table, o.dgids, round_seconds));
  }
  RunResult timed = run_sequential(table, o.dgids, o.latency_samples);  // the p99: each resolve timed
  hits.failed += timed.failed;
  for (const auto& [what, n] : timed.errors) hits.errors[what] += n;
  const double table_rate = hits.per_second(), bare_rate = bare.per_second(), batch_rate = batch.per_second();
  report["table_resolves_per_s"] = static_cast<long long>(table_rate);
  report["table_p99_us"] = round2(quantile(timed.latencies_us, 0.99));
  report["bare_map_per_s"] = static_cast<long long>(bare_rate);
  report["bare_map_table_ratio"] = table_rate > 0 ? round2(bare_rate / table_rate) : 0;
  report["table_batch_resolves_per_s"] = static_cast<long long>(batch_rate);
  report["bare_map_table_batch_ratio"] = batch_rate > 0 ? round2(bare_rate / batch_rate) : 0;
  report["table"] = {{"how", "ibat_resolve_sync answered from the shared table (one thread, round robin over the "
                             "destinations); p99 of single resolves timed one by one; ibat_resolve_table with all "
                             "the destinations in one call; the map and the two calls in turns of " +
                                 std::to_string(kTableRounds) + " rounds"},
                     {"seconds", round2(hits.seconds)},
                     {"ok", hits.ok},
                     {"failed", hits.failed},
                     {"errors", errors_json(hits)},
                     {"p50_us", round2(quantile(timed.latencies_us, 0.50))},
                     {"batch_seconds", round2(batch.seconds)},
                     {"batch_ok", batch.ok},
                     {"batch_failed", batch.failed},
                     {"bare_map_seconds", round2(bare.seconds)}};
}

json measure(ibat_t* h, ibat_t* table, const Options& o) {
  warm_up(h, o);

  // The daemon's counters between the phases: each phase's share is a difference of two.
  const DaemonStats before_cached = daemon_stats(h);
  RunResult cached = run_pipelined(h, o.dgids, o.depth, 0, o.cached_seconds, false);
  const DaemonStats before_single = daemon_stats(h);
  RunResult single = run_sequential(h, o.dgids, o.latency_samples);
  const DaemonStats before_uncached = daemon_stats(h);
  RunResult uncached = run_pipelined(h, o.dgids, o.uncached_depth, IBAT_RESOLVE_FORCE_SA, o.uncached_seconds, true);
  const DaemonStats after_uncached = daemon_stats(h);
  const auto delta = [](const DaemonStats& a, const DaemonStats& b, const char* name) {
    return b.counter(name) - a.counter(name);
  };

  const double cached_rate = cached.per_second(), uncached_rate = uncached.per_second();
  const double p50 = quantile(single.latencies_us, 0.50), p99 = quantile(single.latencies_us, 0.99);
  json report;
  report["cached_resolves_per_s"] = static_cast<long long>(cached_rate);
  report["p50_us"] = round2(p50);
  report["p99_us"] = round2(p99);
  report["uncached_resolves_per_s"] = static_cast<long long>(uncached_rate);
  report["cached_uncached_ratio"] = uncached_rate > 0 ? round2(cached_rate / uncached_rate) : 0;
  report["targets_met"] = {{"cached_resolves_per_s", cached_rate >= kCachedTarget},
                           {"p99_us", p99 <= kP99TargetUs}};
  report["cached"] = {{"connection", 1},
                      {"depth", o.depth},
                      {"seconds", round2(cached.seconds)},
                      {"ok", cached.ok},
                      {"failed", cached.failed},
                      {"errors", errors_json(cached)},
                      {"pipelined_p50_us", round2(quantile(cached.latencies_us, 0.50))},
                      {"pipelined_p99_us", round2(quantile(cached.latencies_us, 0.99))},
                      {"daemon_cache_hits", delta(before_cached, before_single, "cache_hits")},
                      {"daemon_sa_queries", delta(before_cached, before_single, "sa_queries")}};
  report["single"] = {{"samples", o.latency_samples},
                      {"ok", single.ok},
                      {"failed", single.failed},
                      {"errors", errors_json(single)},
                      {"p90_us", round2(quantile(single.latencies_us, 0.90))},
                      {"p999_us", round2(quantile(single.latencies_us, 0.999))},
                      {"max_us", round2(quantile(single.latencies_us, 1.0))},
                      {"daemon_polled_us_per_resolve",
                       round2((before_uncached.polled_seconds() - before_single.polled_seconds()) * 1e6 /
                              o.latency_samples)}};
  report["uncached"] = {{"how", "FORCE_SA resolves through ibatd: one SA PathRecord GET by fabric::SaClient per request, "
                                "at most one in flight per destination (no coalescing)"},
                        {"depth", o.uncached_depth},
                        {"seconds", round2(uncached.seconds)},
                        {"ok", uncached.ok},
                        {"failed", uncached.failed},
                        {"errors", errors_json(uncached)},
                        {"p50_us", round2(quantile(uncached.latencies_us, 0.50))},
                        {"p99_us", round2(quantile(uncached.latencies_us, 0.99))},
                        {"daemon_sa_queries", delta(before_uncached, after_uncached, "sa_queries")}};
  if (table) measure_table(table, o, report);
  report["destinations"] = o.dgid_text.size();
  report["socket"] = o.socket;
  return report;
}

void print_human(const json& r) {
  const auto& c = r["cached"];
  const auto& s = r["single"];
  const auto& u = r["uncached"];
  std::printf("ibat-bench against %s, %zu destinations\n", r["socket"].get<std::string>().c_str(),
              r["destinations"].get<std::size_t>());
  std::printf("  cached, pipelined (1 connection, depth %u): %10lld resolves/s   (target >= %.0f: %s)\n",
              c["depth"].get<unsigned>(), r["cached_resolves_per_s"].get<long long>(), kCachedTarget,
              r["targets_met"]["cached_resolves_per_s"].get<bool>() ? "met" : "MISSED");
  std::printf("  cached, one at a time (%u samples):      p50 %7.1f us  p99 %7.1f us  max %7.1f us   (target p99 <= %.0f us: %s)\n",
              s["samples"].get<unsigned>(), r["p50_us"].get<double>(), r["p99_us"].get<double>(),
              s["max_us"].get<double>(), kP99TargetUs, r["targets_met"]["p99_us"].get<bool>() ? "met" : "MISSED");
  std::printf("    ibatd polled instead of sleeping:          %7.1f us per resolve\n",
              s["daemon_polled_us_per_resolve"].get<double>());
  std::printf("  uncached, FORCE_SA (depth %u):            %10lld resolves/s   p50 %.0f us, %llu SA queries\n",
              u["depth"].get<unsigned>(), r["uncached_resolves_per_s"].get<long long>(), u["p50_us"].get<double>(),
              u["daemon_sa_queries"].get<unsigned long long>());
  std::printf("  cached / uncached:                        %10.1f x\n", r["cached_uncached_ratio"].get<double>());
  if (r.contains("table_resolves_per_s"))
    std::printf("  shared table (1 thread):                  %10lld resolves/s   p99 %.2f us; unordered_map %lld/s (%.2f x)\n",
                r["table_resolves_per_s"].get<long long>(), r["table_p99_us"].get<double>(),
                r["bare_map_per_s"].get<long long>(), r["bare_map_table_ratio"].get<double>());
  if (r.contains("table_batch_resolves_per_s"))
    std::printf("  shared table, ibat_resolve_table batches: %10lld resolves/s   (%.2f x the map)\n",
                r["table_batch_resolves_per_s"].get<long long>(), r["bare_map_table_batch_ratio"].get<double>());
  unsigned long long failed = c["failed"].get<unsigned long long>() + s["failed"].get<unsigned long long>() +
                              u["failed"].get<unsigned long long>();
  std::printf("  failed requests: %llu\n", failed);
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  auto options = parse_options(argc, argv, exit_code);
  if (!options) return exit_code;
  // The socket figures come from a handle that does not map the shared table.
  ::setenv("IBAT_SHARED_TABLE", "0", 1);
  ibat_t* h = nullptr;
  if (int rc = ibat_open(options->socket.c_str(), &h); rc != IBAT_OK) {
    std::fprintf(stderr, "ibat-bench: cannot connect to %s: %s\n", options->socket.c_str(), ibat_strerror(rc));
    return 2;
  }
  ::unsetenv("IBAT_SHARED_TABLE");
  ibat_t* table = nullptr;
  if (ibat_open(options->socket.c_str(), &table) != IBAT_OK) table = nullptr;
  int status = 0;
  try {
    json report = measure(h, table, *options);
    if (options->json) std::printf("%s\n", report.dump(1).c_str());
    else print_human(report);
    bool failed = report["cached"]["failed"] != 0 || report["single"]["failed"] != 0 || report["uncached"]["failed"] != 0 ||
                  (report.contains("table") &&
                   (report["table"]["failed"] != 0 || report["table"]["batch_failed"] != 0));
    status = failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibat-bench: %s\n", e.what());
    status = 1;
  }
  if (table) ibat_close(table);
  ibat_close(h);
  return status;
}
