// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What to simulate (workload, strategy, fabric and SA parameters) and what a run measured.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/policy.h"
#include "sim/monitor.h"
#include "sim/sa_model.h"

namespace ibat::sim {

// docs/simulator.md "Workloads". boot: the daemons start together and no job runs, the run ends when
// every daemon holds a path to every other node; idle: daemons already running, nothing but
// their own upkeep for duration_s.
enum class Workload : std::uint8_t { job_start, churn, sm_restart, boot, idle };
enum class Strategy : std::uint8_t { per_process, flush_on_sm_change, ibat };
// How the cached strategies' Resolvers pace the SA: the Policy as given (adaptive SaPacer by
// default), its token bucket alone (fixed), or the oracle: 0.8 x SA rate / N per node, burst 1.
enum class Pace : std::uint8_t { policy, fixed, oracle };

std::optional<Workload> workload_from_string(std::string_view s);
std::optional<Strategy> strategy_from_string(std::string_view s);
std::string_view to_string(Workload w);
std::string_view to_string(Strategy s);
std::optional<Pace> pace_from_string(std::string_view s);
std::string_view to_string(Pace p);

struct Scenario {
  Workload workload = Workload::job_start;
  Strategy strategy = Strategy::ibat;
  std::uint32_t nodes = 16;
  std::uint32_t ranks = 4;
  std::uint64_t seed = 1;
  SaOptions sa;
  // The fabric-side SaClient (src/fabric): per-MAD timeout and resends before `timeout` is
  // reported to the Resolver (or, for per-process, to the rank).
  std::int64_t mad_timeout_ns = 200'000'000;
  std::uint32_t mad_retries = 3;
  // Each daemon's MAD timers follow the SA's round trip, as MadRequester's (RoundTripEstimate);
  // false: the fixed timers above alone, as before (ibat-sim --fixed-mad-timers, to compare).
  bool mad_timers_follow_rtt = true;
  // Every daemon's port monitor (not per-process: no daemon): its remote MADs reach the SA model.
  MonitorOptions monitor;
  // Outstanding connects per rank (per node for the cached strategies, whose ranks run in lockstep).
  std::uint32_t window = 64;
  core::Policy policy;  // of every node's Resolver
  // job-start without an SM restart never uses a destination twice, so a node's finished entries
  // are dead weight: its Resolver keeps at most this many (LRU-evicted, counted in `evictions`;
  // nothing the SA sees changes). 0: Policy::capacity. See docs/simulator.md "Simulator speed".
  std::uint32_t job_start_capacity = 1024;
  Pace pace = Pace::policy;
  // Policy::prefetch of every Resolver is `policy.prefetch` (ibat-sim --prefetch): the Resolver's
  // default, subnet.
  // Of each resolve; default Policy::request_timeout (job-start: Policy::max_request_timeout).
  std::optional<core::Duration> request_timeout;

  // job-start: the daemons start this long before the job (none: they run already, as in every
  // other workload but boot). The run's figures then count from the job's start, the warm-up's
  // own in RunResult::warmup.
  std::optional<double> warm_s;
  // boot and warm_s: each daemon starts at a uniform random time in [0, start_spread_s).
  double start_spread_s = 1.0;
  // boot and warm_s: each daemon starts knowing the subnet's size, as from its warm-cache snapshot
  // or Policy::expected_subnet_ports (which the run sets), so that its first table takes its place
  // in the subnet's spread (Policy::in_use_window_paths_per_s); no snapshot's entries are loaded.
  bool known_subnet = false;
  // The ServiceID each connect carries, as rdma_cm's do: none (IPoIB-like), per_process (an
  // ephemeral TCP port for each (destination, rank), which no QoS range names), or storage
  // (iSER's, which the default Policy::qos_service_ids keeps apart).
  enum class ServiceIds : std::uint8_t { none, per_process, storage };
  ServiceIds service_ids = ServiceIds::none;
  // The QoS classes the connects carry, as rdma_cm's carry the ToS: 0 none; K: the connects are
  // spread over classes 1-K, rank r's to destination d carrying class 1 + (d + r) % K.
  std::uint16_t qos_classes = 0;
  // churn and sm-restart: steady traffic until `duration_s`; idle: the run's length.
  double duration_s = 60.0;
  double connects_per_rank_s = 1.0;  // churn: Poisson rate; sm-restart: one connect per period
  std::uint32_t working_set = 64;    // sm-restart: destinations each node keeps using
  // SM restart (sm-restart workload, or any workload when sm_restart_at_s is set): the SA is gone
  // for sa_down_s, then every node sees the SM change (and new LIDs when lid_change).
  std::optional<double> sm_restart_at_s;
  double sa_down_s = 2.0;
  bool lid_change = false;
  // SA unavailable window without an SM change.
  std::optional<double> sa_outage_at_s;
  double sa_outage_s = 0.0;

  std::int64_t bucket_ns = 1'000'000'000;
  // > 0: a progress line on stderr every this much virtual time (ibat-sim --progress-s).
  std::int64_t progress_ns = 0;
  // per-process job-start beyond this many SA queries is computed in closed form.
  std::uint64_t max_exact_queries = 50'000'000;
  bool force_analytic = false;
};

// What a run measured, over its window: the whole run, or from the job's start with warm_s.
struct RunResult {
  bool analytic = false;
  std::uint64_t requests = 0;      // resolve requests (connects) issued by ranks
  std::uint64_t sa_queries = 0;    // GETs reaching the SA, every MAD attempt counted (monitors' too)
  std::uint64_t sa_tables = 0;     // PathRecord GetTables reaching the SA, every MAD attempt counted
  std::uint64_t sa_switch_tables = 0;  // the switches' NodeRecord GetTables sent beside them, and SwitchInfoRecord ones (sizes)
  std::uint64_t sa_tables_dropped = 0;  // PathRecord GetTable attempts the SA dropped (in sa_dropped)
  std::uint64_t sa_served = 0;
  std::uint64_t sa_dropped = 0;
  std::uint64_t sa_overload_dropped = 0;  // of those: OpenSM's overload rule (not an outage)
  double sa_max_wait_ms = 0;               // longest wait in the SA's queue
  std::uint64_t sa_late_buckets = 0;       // buckets in which a request waited > the MAD timeout
  double sa_peak_qps = 0;
  std::uint64_t sa_records = 0;    // records the SA computed (a GET: 1, a PathRecord GetTable: N)
  double sa_busy_s = 0;            // the SA's work, summed over its threads
  double sa_busy_fraction = 0;     // sa_busy_s / (threads x the window's length)
  std::uint64_t failures = 0;      // requests completed with an error
  std::uint64_t stale_lid_served = 0;  // answers carrying a LID the SM no longer uses
  double resolve_p50_ms = 0;
  double resolve_p99_ms = 0;
  double resolve_max_ms = 0;
  double completion_s = 0;         // virtual time of the last completion
  std::uint64_t resolver_sa_queries = 0;  // sum of Resolver stats (0 for per-process)
  std::uint64_t table_probes = 0;  // the table gates' probes, each a GET (sum of Resolver stats)
  std::uint64_t cache_hits = 0;
  std::uint64_t stale_hits = 0;
  std::uint64_t stale_holds = 0;      // held for the fresh answer: the node's own LID moved
  std::uint64_t stale_fallbacks = 0;  // of those, answered with the old path
  std::uint64_t coalesced = 0;
  std::uint64_t evictions = 0;
  std::uint64_t revalidations = 0;
  std::uint64_t tables_answered = 0;  // Resolver stats: GetTables answered and read (before the run: not)
  std::uint64_t tables_failed = 0;    // ... given up (timed out retry_count times) or refused: GETs
  // sm-restart --lid-change, ibat: seconds from the SM change until every node's working set, and
  // every path cached, carries the new DLIDs (none: not within the run).
  std::optional<double> in_use_renewed_s;
  std::optional<double> all_renewed_s;
  std::uint64_t paths_held = 0;       // cache entries of every Resolver at the end of the window
  // The daemons' port monitors: MADs to the SM/SA (included in sa_queries) and to the own port.
  std::uint64_t monitor_remote_mads = 0;
  std::uint64_t monitor_local_mads = 0;
  std::uint64_t monitor_full_checks = 0;
  std::uint64_t monitor_routine_checks = 0;
  // MAD attempts whose timer fired before any answer (each resent, or given up after the last):
  // the daemons' PathRecord GETs, their GetTables (paths, switches, subnet size), their monitors'.
  std::uint64_t get_timeouts = 0;
  std::uint64_t table_timeouts = 0;
  std::uint64_t monitor_timeouts = 0;
  std::uint64_t events = 0;
  double wall_s = 0;
  std::string note;  // modelling remarks (e.g. what the closed form assumes)
  // warm_s: the same figures over the warm-up, [0, job start) (its completion_s from 0).
  std::shared_ptr<const RunResult> warmup;
};

}  // namespace ibat::sim
