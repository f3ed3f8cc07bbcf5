// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// JSON and text reports of a run: see report.h.
#include "sim/report.h"

#include <sys/resource.h>

#include <cstdio>

namespace ibat::sim {

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

namespace {

// The figures a run measured over its window (also those of a --warm-s warm-up).
nlohmann::json figures_json(const RunResult& r) {
  return nlohmann::json{
      {"requests", r.requests},
      {"sa_queries", r.sa_queries},
      {"sa_tables", r.sa_tables},
      {"sa_switch_tables", r.sa_switch_tables},
      {"sa_tables_dropped", r.sa_tables_dropped},
      {"sa_served", r.sa_served},
      {"sa_dropped", r.sa_dropped},
      {"sa_overload_dropped", r.sa_overload_dropped},
      {"sa_max_wait_ms", r.sa_max_wait_ms},
      {"sa_late_buckets", r.sa_late_buckets},
      {"sa_peak_qps", r.sa_peak_qps},
      {"sa_records", r.sa_records},
      {"sa_busy_s", r.sa_busy_s},
      {"sa_busy_fraction", r.sa_busy_fraction},
      {"failures", r.failures},
      {"stale_lid_served", r.stale_lid_served},
      {"resolve_p50_ms", r.resolve_p50_ms},
      {"resolve_p99_ms", r.resolve_p99_ms},
      {"resolve_max_ms", r.resolve_max_ms},
      {"completion_s", r.completion_s},
      {"resolver_sa_queries", r.resolver_sa_queries},
      {"table_probes", r.table_probes},
      {"cache_hits", r.cache_hits},
      {"stale_hits", r.stale_hits},
      {"stale_holds", r.stale_holds},
      {"stale_fallbacks", r.stale_fallbacks},
      {"coalesced", r.coalesced},
      {"evictions", r.evictions},
      {"revalidations", r.revalidations},
      {"tables_answered", r.tables_answered},
      {"tables_failed", r.tables_failed},
      {"paths_held", r.paths_held},
      {"monitor_remote_mads", r.monitor_remote_mads},
      {"monitor_local_mads", r.monitor_local_mads},
      {"monitor_full_checks", r.monitor_full_checks},
      {"monitor_routine_checks", r.monitor_routine_checks},
      {"get_timeouts", r.get_timeouts},
      {"table_timeouts", r.table_timeouts},
      {"monitor_timeouts", r.monitor_timeouts},
  };
}

}  // namespace

nlohmann::json to_json(const Scenario& s, const RunResult& r) {
  const double events_per_s = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  nlohmann::json j = figures_json(r);
  j.update(nlohmann::json{
      {"workload", to_string(s.workload)},
      {"strategy", to_string(s.strategy)},
      {"nodes", s.nodes},
      {"ranks", s.ranks},
      {"seed", s.seed},
      {"sa_rate", s.sa.get_rate_per_s()},
      {"sa_query_us", static_cast<double>(s.sa.query_ns) / 1e3},
      {"sa_record_us", static_cast<double>(s.sa.record_ns) / 1e3},
      {"sa_threads", s.sa.threads},
      {"sa_queue", s.sa.queue_limit},
      {"latency_us", static_cast<double>(s.sa.latency_ns) / 1e3},
      {"pace", to_string(s.pace)},
      {"prefetch", ibat::core::to_string(s.policy.prefetch)},
      {"analytic", r.analytic},
      {"events", r.events},
      {"events_per_s", events_per_s},
      {"wall_s", r.wall_s},
      {"peak_rss_mb", peak_rss_mb()},
  });
  if (s.workload == Workload::idle) j["duration_s"] = s.duration_s;
  if (s.warm_s) j["warm_s"] = *s.warm_s;
  if (s.workload == Workload::boot || s.warm_s) {
    j["start_spread_s"] = s.start_spread_s;
    j["known_subnet"] = s.known_subnet;
  }
  if (r.warmup) j["warmup"] = figures_json(*r.warmup);
  if (s.lid_change && s.strategy == Strategy::ibat && (s.sm_restart_at_s || s.workload == Workload::sm_restart)) {
    j["in_use_renewed_s"] = r.in_use_renewed_s ? nlohmann::json(*r.in_use_renewed_s) : nlohmann::json();
    j["all_renewed_s"] = r.all_renewed_s ? nlohmann::json(*r.all_renewed_s) : nlohmann::json();
  }
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

std::string summary_line(const Scenario& s, const RunResult& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s %s N=%u R=%u%s: sa_queries=%llu sa_tables=%llu dropped=%llu peak=%.0f q/s failures=%llu "
                "p50=%.3f ms p99=%.3f ms max=%.3f ms completion=%.3f s sa_busy=%.3f s (%.4f %%) "
                "monitor=%llu remote/%llu local MADs (wall %.2f s, %llu events)",
                std::string(to_string(s.workload)).c_str(), std::string(to_string(s.strategy)).c_str(),
                s.nodes, s.ranks, r.analytic ? " [closed form]" : "",
                static_cast<unsigned long long>(r.sa_queries), static_cast<unsigned long long>(r.sa_tables),
                static_cast<unsigned long long>(r.sa_dropped), r.sa_peak_qps,
                static_cast<unsigned long long>(r.failures), r.resolve_p50_ms, r.resolve_p99_ms,
                r.resolve_max_ms, r.completion_s, r.sa_busy_s, 100.0 * r.sa_busy_fraction, static_cast<unsigned long long>(r.monitor_remote_mads),
                static_cast<unsigned long long>(r.monitor_local_mads), r.wall_s, static_cast<unsigned long long>(r.events));
  return line;
}

}  // namespace ibat::sim
