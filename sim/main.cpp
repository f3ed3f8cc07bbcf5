// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-sim: command line of the discrete-event scale simulator (docs/simulator.md; its results: docs/scale.md).
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "fabric/fabric_options.h"
#include "sim/analytic.h"
#include "sim/report.h"
#include "sim/simulator.h"

int main(int argc, char** argv) {
  using namespace ibat::sim;
  CLI::App app{"ibat-sim: SA load and resolve latency at scale, driven by the real ibat core"};
  Scenario sc;
  std::string workload = "job-start";
  std::string strategy = "ibat";
  std::string pace = "adaptive";
  std::string prefetch{ibat::core::to_string(sc.policy.prefetch)};
  double fifo_timeout_ms = 10'000.0;
  double sa_query_us = static_cast<double>(sc.sa.query_ns) / 1e3;
  double sa_record_us = static_cast<double>(sc.sa.record_ns) / 1e3;
  double sa_rate = 0.0;
  double warm_s = -1.0;
  double latency_us = 5.0;
  double mad_timeout_ms = 200.0;
  double bucket_ms = 1000.0;
  double request_timeout_s = 0.0;
  double node_sa_rate = sc.policy.sa_rate;
  std::uint32_t node_sa_burst = sc.policy.sa_burst;
  std::uint32_t capacity = sc.policy.capacity;
  double sm_restart_at = -1.0;
  double sa_outage_at = -1.0;
  bool json = false;
  bool no_monitor = false;
  bool fixed_mad_timers = false;
  double poll_interval_ms = 1000.0;
  double sm_check_interval_s = 60.0;
  double sm_refresh_spread_ms = std::chrono::duration<double, std::milli>(ibat::fabric::kDefaultSmRefreshSpread).count();
  bool no_hca_events = false;
  std::string csv;

  app.add_option("--workload", workload, "job-start | churn | sm-restart | boot | idle")
      ->check(CLI::IsMember({"job-start", "churn", "sm-restart", "boot", "idle"}));
  app.add_option("--strategy", strategy, "per-process | flush-on-sm-change | ibat")
      ->check(CLI::IsMember({"per-process", "flush-on-sm-change", "ibat"}));
  app.add_option("--nodes", sc.nodes, "simulated nodes N")->check(CLI::Range(2u, 20'000u));
  app.add_option("--ranks", sc.ranks, "ranks (processes) per node R")->check(CLI::Range(1u, 1024u));
  auto* query_us = app.add_option("--sa-query-us", sa_query_us,
                                  "SA work per query, whatever it returns, us (default 17)")
                       ->check(CLI::NonNegativeNumber);
  auto* record_us = app.add_option("--sa-record-us", sa_record_us, "SA work per record computed, us (default 3.33)")
                        ->check(CLI::NonNegativeNumber);
  app.add_option("--sa-rate", sa_rate,
                 "GETs per second of one SA thread: scales --sa-query-us and --sa-record-us, their "
                 "ratio kept, to 1/rate a GET")
      ->check(CLI::PositiveNumber)
      ->excludes(query_us)
      ->excludes(record_us);
  app.add_option("--sa-threads", sc.sa.threads, "SA worker threads on the one FIFO")->check(CLI::Range(1u, 1024u));
  app.add_option("--sa-queue", sc.sa.queue_limit,
                 "SA queue limit (requests beyond are dropped; 0: none, as OpenSM)");
  app.add_option("--sa-fifo-timeout-ms", fifo_timeout_ms,
                 "OpenSM max_msg_fifo_timeout: GETs are dropped while the last one taken off the "
                 "queue had waited longer (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--pace", pace, "adaptive (the Policy: SaPacer) | fixed (token bucket only) | "
                 "oracle (0.8 x the SA's GET rate / N per node)")
      ->check(CLI::IsMember({"adaptive", "fixed", "oracle"}));
  app.add_option("--prefetch", prefetch, "Policy::prefetch of every node's Resolver: subnet (one GetTable "
                 "per port and SM; the default) | off (GETs only, as before)")
      ->check(CLI::IsMember({"subnet", "off"}));
  app.add_option("--latency-us", latency_us, "one-way fabric latency, us")->check(CLI::NonNegativeNumber);
  app.add_option("--mad-timeout-ms", mad_timeout_ms, "SaClient per-MAD timeout")->check(CLI::PositiveNumber);
  app.add_option("--mad-retries", sc.mad_retries, "SaClient resends before reporting timeout");
  app.add_option("--window", sc.window, "outstanding connects per rank (per node for cached strategies)")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--node-sa-rate", node_sa_rate, "Policy::sa_rate of every node's Resolver, queries/s")
      ->check(CLI::PositiveNumber);
  app.add_option("--node-sa-burst", node_sa_burst, "Policy::sa_burst of every node's Resolver")
      ->check(CLI::PositiveNumber);
  app.add_option("--capacity", capacity, "Policy::capacity (cache entries per node)")->check(CLI::PositiveNumber);
  app.add_option("--job-start-capacity", sc.job_start_capacity,
                 "job-start without SM restart: cache entries each node keeps (0: --capacity)");
  app.add_option("--request-timeout-s", request_timeout_s, "deadline of each resolve (default: Policy)");
  app.add_option("--duration-s", sc.duration_s, "churn / sm-restart: traffic duration; idle: run length");
  app.add_option("--warm-s", warm_s, "job-start: the daemons start this long before the job; figures "
                 "count from the job's start, the warm-up's in `warmup`")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--start-spread-s", sc.start_spread_s,
                 "boot / --warm-s: each daemon starts at a random time in [0, this)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--known-subnet", sc.known_subnet,
               "boot / --warm-s: each daemon starts knowing the subnet's size (as from its warm cache), "
               "so its first table is spread like those after an SM change");
  std::string service_ids = "none";
  app.add_option("--service-ids", service_ids,
                 "job-start: the ServiceID each connect carries: none, per-process (rdma_cm's ephemeral "
                 "ports, one per destination rank) or storage (iSER's, kept apart by default)")
      ->check(CLI::IsMember({"none", "per-process", "storage"}));
  app.add_option("--qos-classes", sc.qos_classes,
                 "the QoS classes the connects carry (rdma_cm: the ToS): 0 none, K: spread over classes 1-K "
                 "(rank r to destination d: 1 + (d + r) % K); Policy::qos_classes says which are kept apart")
      ->check(CLI::Range(0, 4095));
  app.add_option("--connect-rate", sc.connects_per_rank_s, "churn / sm-restart: connects per rank per s")
      ->check(CLI::PositiveNumber);
  app.add_option("--working-set", sc.working_set, "sm-restart: destinations each node keeps using")
      ->check(CLI::PositiveNumber);
  app.add_option("--sm-restart-at", sm_restart_at, "SM restart time, s (sm-restart default: duration/3)");
  app.add_option("--sa-down-s", sc.sa_down_s, "SA unavailable during the SM restart, s");
  app.add_flag("--lid-change", sc.lid_change, "the restarted SM assigns new LIDs");
  app.add_option("--sa-outage-at", sa_outage_at, "SA unavailable from this time, s (no SM change)");
  app.add_option("--sa-outage-s", sc.sa_outage_s, "length of that outage, s");
  app.add_flag("--no-monitor", no_monitor, "do not model the daemons' port monitor MADs");
  app.add_flag("--fixed-mad-timers", fixed_mad_timers,
               "MAD timers stay at --mad-timeout-ms (x 2^k) instead of following each daemon's SA "
               "round trip (at least 2 x srtt, as ibatd's MadRequester): to compare");
  app.add_option("--poll-interval-ms", poll_interval_ms, "daemon: fabric.poll_interval_ms (local PortInfo)")
      ->check(CLI::PositiveNumber);
  app.add_option("--sm-check-interval-s", sm_check_interval_s,
                 "daemon: fabric.sm_check_interval_s (routine SM/SA check, x [1, 1.5))")
      ->check(CLI::PositiveNumber);
  app.add_option("--sm-refresh-spread-ms", sm_refresh_spread_ms,
                 "daemon: fabric.sm_refresh_spread_ms (after an SM change, subscriptions and the broadcast "
                 "group; only with HCA events, as ibatd)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-hca-events", no_hca_events,
               "daemons without HCA port events (no verbs device): routine SM/SA checks every "
               "--sm-check-interval-s, the refresh after an SM change at once; by default they have "
               "them, as on a host with an HCA: no routine check, the refresh spread");
  app.add_option("--seed", sc.seed, "random seed");
  double progress_s = 0;
  app.add_option("--progress-s", progress_s, "a progress line on stderr every this many virtual seconds")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bucket-ms", bucket_ms, "time-series bucket width")->check(CLI::PositiveNumber);
  app.add_option("--max-exact-queries", sc.max_exact_queries,
                 "per-process job-start above this many SA queries is computed in closed form");
  app.add_flag("--analytic", sc.force_analytic, "per-process job-start: closed form even when small");
  app.add_flag("--json", json, "print one JSON object");
  app.add_option("--csv", csv, "write the time series to FILE");
  CLI11_PARSE(app, argc, argv);
  sc.service_ids = service_ids == "storage"       ? Scenario::ServiceIds::storage
                   : service_ids == "per-process" ? Scenario::ServiceIds::per_process
                                                  : Scenario::ServiceIds::none;

  sc.workload = *workload_from_string(workload);  // checked by IsMember above
  sc.strategy = *strategy_from_string(strategy);
  sc.pace = *pace_from_string(pace);
  sc.policy.prefetch = *ibat::core::prefetch_from_string(prefetch);
  sc.sa.query_ns = std::llround(sa_query_us * 1e3);
  sc.sa.record_ns = std::llround(sa_record_us * 1e3);
  if (sa_rate > 0) sc.sa.set_get_rate(sa_rate);
  if (warm_s >= 0) sc.warm_s = warm_s;
  sc.sa.fifo_timeout_ns = std::llround(fifo_timeout_ms * 1e6);
  sc.sa.latency_ns = std::llround(latency_us * 1e3);
  sc.mad_timeout_ns = std::llround(mad_timeout_ms * 1e6);
  sc.bucket_ns = std::llround(bucket_ms * 1e6);
  sc.progress_ns = std::llround(progress_s * 1e9);
  sc.monitor.enabled = !no_monitor;
  sc.mad_timers_follow_rtt = !fixed_mad_timers;
  sc.monitor.poll_ns = std::llround(poll_interval_ms * 1e6);
  sc.monitor.sm_check_ns = std::llround(sm_check_interval_s * 1e9);
  sc.monitor.refresh_spread_ns = std::llround(sm_refresh_spread_ms * 1e6);
  sc.monitor.hca_events = !no_hca_events;  // what applies: fabric::MonitorSettings::of, as FabricPort
  sc.policy.sa_rate = node_sa_rate;
  sc.policy.sa_burst = node_sa_burst;
  sc.policy.capacity = capacity;
  if (request_timeout_s > 0) {
    sc.request_timeout = std::chrono::duration_cast<ibat::core::Duration>(
        std::chrono::duration<double>(request_timeout_s));
  }
  if (sm_restart_at >= 0) sc.sm_restart_at_s = sm_restart_at;
  if (sa_outage_at >= 0) sc.sa_outage_at_s = sa_outage_at;
  if (const std::string err = sc.policy.validate(); !err.empty()) {
    std::cerr << "ibat-sim: bad policy: " << err << '\n';
    return 2;
  }

  RunResult result;
  if (needs_closed_form(sc)) {
    result = per_process_job_start(sc);
    if (!csv.empty()) std::cerr << "ibat-sim: closed form has no time series; --csv ignored\n";
  } else {
    std::unique_ptr<Simulator> sim;
    try {
      sim = std::make_unique<Simulator>(sc);
    } catch (const std::invalid_argument& e) {  // a combination the simulator does not model
      std::cerr << "ibat-sim: " << e.what() << '\n';
      return 2;
    }
    result = sim->run();
    if (!csv.empty() && !sim->series().write_csv(csv)) {
      std::cerr << "ibat-sim: cannot write " << csv << '\n';
      return 1;
    }
  }
  if (json) {
    std::cout << to_json(sc, result).dump() << '\n';
  } else {
    std::cout << summary_line(sc, result) << '\n';
  }
  return 0;
}
