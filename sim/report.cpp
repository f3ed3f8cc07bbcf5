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

nlohmann::json to_json(const Scenario& s, const RunResult& r) {
  const double events_per_s = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  nlohmann::json j{
      {"workload", to_string(s.workload)},
      {"strategy", to_string(s.strategy)},
      {"nodes", s.nodes},
      {"ranks", s.ranks},
      {"seed", s.seed},
      {"sa_rate", s.sa.rate_per_s},
      {"sa_queue", s.sa.queue_limit},
      {"latency_us", static_cast<double>(s.sa.latency_ns) / 1e3},
      {"analytic", r.analytic},
      {"requests", r.requests},
      {"sa_queries", r.sa_queries},
      {"sa_served", r.sa_served},
      {"sa_dropped", r.sa_dropped},
      {"sa_overload_dropped", r.sa_overload_dropped},
      {"sa_max_wait_ms", r.sa_max_wait_ms},
      {"sa_late_buckets", r.sa_late_buckets},
      {"pace", to_string(s.pace)},
      {"sa_peak_qps", r.sa_peak_qps},
      {"failures", r.failures},
      {"stale_lid_served", r.stale_lid_served},
      {"resolve_p50_ms", r.resolve_p50_ms},
      {"resolve_p99_ms", r.resolve_p99_ms},
      {"resolve_max_ms", r.resolve_max_ms},
      {"completion_s", r.completion_s},
      {"resolver_sa_queries", r.resolver_sa_queries},
      {"cache_hits", r.cache_hits},
      {"stale_hits", r.stale_hits},
      {"stale_holds", r.stale_holds},
      {"stale_fallbacks", r.stale_fallbacks},
      {"coalesced", r.coalesced},
      {"evictions", r.evictions},
      {"revalidations", r.revalidations},
      {"monitor_remote_mads", r.monitor_remote_mads},
      {"monitor_local_mads", r.monitor_local_mads},
      {"monitor_full_checks", r.monitor_full_checks},
      {"monitor_routine_checks", r.monitor_routine_checks},
      {"events", r.events},
      {"events_per_s", events_per_s},
      {"wall_s", r.wall_s},
      {"peak_rss_mb", peak_rss_mb()},
  };
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

std::string summary_line(const Scenario& s, const RunResult& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s %s N=%u R=%u%s: sa_queries=%llu dropped=%llu peak=%.0f q/s failures=%llu "
                "p50=%.3f ms p99=%.3f ms max=%.3f ms completion=%.3f s monitor=%llu remote/%llu local MADs "
                "(wall %.2f s, %llu events)",
                std::string(to_string(s.workload)).c_str(), std::string(to_string(s.strategy)).c_str(),
                s.nodes, s.ranks, r.analytic ? " [closed form]" : "",
                static_cast<unsigned long long>(r.sa_queries),
                static_cast<unsigned long long>(r.sa_dropped), r.sa_peak_qps,
                static_cast<unsigned long long>(r.failures), r.resolve_p50_ms, r.resolve_p99_ms,
                r.resolve_max_ms, r.completion_s, static_cast<unsigned long long>(r.monitor_remote_mads),
                static_cast<unsigned long long>(r.monitor_local_mads), r.wall_s, static_cast<unsigned long long>(r.events));
  return line;
}

}  // namespace ibat::sim
