// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Closed-form per-process job-start: see analytic.h.
#include "sim/analytic.h"

#include <algorithm>

namespace ibat::sim {

namespace {
std::uint64_t per_process_job_start_queries(const Scenario& s) {
  const std::uint64_t n = s.nodes;
  const std::uint64_t r = s.ranks;
  return n * r * (n - 1) * r;
}
}  // namespace

bool needs_closed_form(const Scenario& s) {
  if (s.strategy != Strategy::per_process || s.workload != Workload::job_start || s.warm_s) return false;
  return s.force_analytic || per_process_job_start_queries(s) > s.max_exact_queries;
}

RunResult per_process_job_start(const Scenario& s) {
  RunResult r;
  r.analytic = true;
  r.requests = per_process_job_start_queries(s);
  r.sa_queries = r.requests;
  r.sa_served = r.requests;
  const double get_s = static_cast<double>(s.sa.work_ns(1)) / 1e9;  // one GET on one SA thread
  const double round_trip_s = 2.0 * static_cast<double>(s.sa.latency_ns) / 1e9 + get_s;
  // Offered load if the SA kept up: every rank keeps `window` queries in flight.
  const double offered_qps = static_cast<double>(s.nodes) * s.ranks * s.window / round_trip_s;
  r.sa_peak_qps = std::min(offered_qps, s.sa.get_rate_per_s());
  r.sa_records = r.sa_queries;
  r.sa_busy_s = static_cast<double>(r.sa_queries) * get_s;
  const double sa_bound_s = r.sa_busy_s / s.sa.threads;
  const double per_rank_connects = static_cast<double>(s.ranks) * (s.nodes - 1);
  const double client_bound_s = per_rank_connects / s.window * round_trip_s;
  r.completion_s = std::max(sa_bound_s, client_bound_s);
  r.sa_busy_fraction = r.sa_busy_s / (s.sa.threads * r.completion_s);
  r.note = "closed form: sa_queries = N*R*(N-1)*R exactly; completion_s = max(queries / sa_rate, "
           "per-rank connects / window * round trip), a lower bound that assumes no drop and no "
           "retry; drops, failures and latency percentiles are not modelled (reported as 0)";
  return r;
}

}  // namespace ibat::sim
