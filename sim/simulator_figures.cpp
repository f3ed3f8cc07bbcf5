// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What a run measured over its window (the whole run, or the job after a --warm-s warm-up): the
// SA's (GETs and GetTables apart), the monitors' and the Resolvers' totals, less those of the
// warm-up.
#include <algorithm>

#include "sim/simulator.h"

namespace ibat::sim {

namespace {

double ns_to_ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The counters of `r` from the end of `before` on; gauges (paths_held) and the run's own figures
// (events, note) stay.
void subtract_counters(RunResult& r, const RunResult& before) {
  r.requests -= before.requests;
  r.sa_queries -= before.sa_queries;
  r.sa_tables -= before.sa_tables;
  r.sa_switch_tables -= before.sa_switch_tables;
  r.sa_tables_dropped -= before.sa_tables_dropped;
  r.sa_served -= before.sa_served;
  r.sa_dropped -= before.sa_dropped;
  r.sa_overload_dropped -= before.sa_overload_dropped;
  r.sa_records -= before.sa_records;
  r.sa_busy_s -= before.sa_busy_s;
  r.failures -= before.failures;
  r.stale_lid_served -= before.stale_lid_served;
  r.resolver_sa_queries -= before.resolver_sa_queries;
  r.table_probes -= before.table_probes;
  r.cache_hits -= before.cache_hits;
  r.stale_hits -= before.stale_hits;
  r.stale_holds -= before.stale_holds;
  r.stale_fallbacks -= before.stale_fallbacks;
  r.coalesced -= before.coalesced;
  r.evictions -= before.evictions;
  r.revalidations -= before.revalidations;
  r.tables_answered -= before.tables_answered;
  r.tables_failed -= before.tables_failed;
  r.monitor_remote_mads -= before.monitor_remote_mads;
  r.monitor_local_mads -= before.monitor_local_mads;
  r.monitor_full_checks -= before.monitor_full_checks;
  r.monitor_routine_checks -= before.monitor_routine_checks;
  r.get_timeouts -= before.get_timeouts;
  r.table_timeouts -= before.table_timeouts;
  r.monitor_timeouts -= before.monitor_timeouts;
}

}  // namespace

RunResult Simulator::figures(std::int64_t from_ns, const RunResult* before) const {
  RunResult r = result_;  // requests, failures, stale_lid_served, completion_s, events, note
  const SaTotals& sa = sa_.totals();
  r.sa_queries = sa.arrived - sa.path_tables_arrived - sa.switch_tables_arrived;
  r.sa_tables = sa.path_tables_arrived;
  r.sa_switch_tables = sa.switch_tables_arrived;
  r.sa_tables_dropped = sa.path_tables_dropped;
  r.sa_served = sa.served;
  r.sa_dropped = sa.dropped;
  r.sa_overload_dropped = sa.overload_dropped;
  r.sa_records = sa.records;
  r.sa_busy_s = static_cast<double>(sa.busy_ns) / 1e9;
  r.sa_max_wait_ms = ns_to_ms(series_.max_sa_wait_ns(from_ns));
  r.sa_late_buckets = series_.buckets_waiting_over(sc_.mad_timeout_ns, from_ns);
  r.sa_peak_qps = series_.peak_sa_qps(from_ns);
  const MonitorTotals mon = monitor_.totals(now_ns_);
  r.monitor_remote_mads = mon.remote_mads;
  r.monitor_local_mads = mon.local_mads;
  r.monitor_full_checks = mon.full_checks;
  r.monitor_routine_checks = mon.routine_checks;
  r.monitor_timeouts = mon.timeouts;
  r.resolve_p50_ms = ns_to_ms(latency_.quantile(0.50));
  r.resolve_p99_ms = ns_to_ms(latency_.quantile(0.99));
  r.resolve_max_ms = ns_to_ms(latency_.max());
  for (const Node& node : nodes_) {
    if (!node.resolver) continue;
    const core::Stats st = node.resolver->stats();
    r.resolver_sa_queries += st.sa_queries;
    r.table_probes += st.sa_probes;
    r.cache_hits += st.cache_hits;
    r.stale_hits += st.stale_hits;
    r.stale_holds += st.stale_holds;
    r.stale_fallbacks += st.stale_fallbacks;
    r.coalesced += st.coalesced;
    r.evictions += st.evictions;
    r.revalidations += st.revalidations;
    r.tables_answered += st.sa_tables_answered;
    r.tables_failed += st.sa_tables_failed;
    r.paths_held += st.entries;
  }
  r.tables_answered -= tables_before_run_;
  if (renewal_.sm_change_ns >= 0) {
    auto since_change = [this](std::int64_t at) -> std::optional<double> {
      if (at < 0) return std::nullopt;
      return static_cast<double>(at - renewal_.sm_change_ns) / 1e9;
    };
    r.in_use_renewed_s = since_change(renewal_.in_use_done_ns);
    r.all_renewed_s = since_change(renewal_.all_done_ns);
  }
  if (before != nullptr) subtract_counters(r, *before);
  const double from_s = static_cast<double>(from_ns) / 1e9;
  r.completion_s = std::max(0.0, r.completion_s - from_s);
  const double window_s = static_cast<double>(now_ns_ - from_ns) / 1e9;
  if (window_s > 0) r.sa_busy_fraction = r.sa_busy_s / (sa_.options().threads * window_s);
  return r;
}

}  // namespace ibat::sim
