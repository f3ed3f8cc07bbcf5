// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The discrete-event scale simulator: one real core::Resolver per simulated node (or, for the
// per-process strategy, ranks querying the SA themselves), an SA server model, the fabric-side
// MAD timeout/retry of the SaClient (GETs, and the GetTables of the subnet prefetch), and the
// workloads of docs/scale.md, all on one virtual clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "core/clock.h"
#include "core/query_sink.h"
#include "core/resolver.h"
#include "fabric/sa_tables.h"
#include "fabric/table_join.h"
#include "sim/event_queue.h"
#include "sim/latency_histogram.h"
#include "sim/mad_attempts.h"
#include "sim/monitor.h"
#include "sim/query_table.h"
#include "sim/round_trips.h"
#include "sim/sa_model.h"
#include "sim/scenario.h"
#include "sim/time_series.h"

namespace ibat::sim {

class Simulator {
 public:
  explicit Simulator(const Scenario& scenario);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs the scenario to completion (every request completed, traffic window over).
  RunResult run();
  const TimeSeries& series() const { return series_; }

  // Identities on the simulated subnet, shared by the tests.
  static core::Gid gid_of(std::uint32_t node);
  static std::uint32_t node_of(const core::Gid& gid);
  core::Lid lid_of(std::uint32_t node) const;

 private:
  class SimClock final : public core::Clock {
   public:
    explicit SimClock(const std::int64_t& now_ns) : now_ns_(now_ns) {}
    core::TimePoint now() const override { return core::TimePoint(core::Duration(now_ns_)); }

   private:
    const std::int64_t& now_ns_;
  };
  class NodeSink final : public core::QuerySink {
   public:
    NodeSink(Simulator& sim, std::uint32_t node) : sim_(sim), node_(node) {}
    void send_path_query(const core::PathQuery& query) override;
    void cancel_query(core::QueryId id) override;
    bool send_table_query(const core::TableQuery& query) override;
    bool send_size_query(const core::SubnetSizeQuery& query) override;
    bool send_probe(const core::PathQuery& query) override;

   private:
    Simulator& sim_;
    std::uint32_t node_;
  };
  // A query between the node and the SA, as the fabric SaClient tracks it.
  struct PendingQuery {
    std::uint32_t dest = 0;
    std::uint32_t slot = 0;  // per-process: the connect waiting for it
    MadAttempts mad;
  };
  // One SaClient::query_path_table (sim/simulator_tables.cpp): the PathRecord GetTable and the
  // NodeRecord GetTable of the switches, both in flight, joined by fabric::TableJoin.
  struct PendingTable {
    core::QueryId id = 0;  // the Resolver's TableQuery
    fabric::TableJoin join;
    MadAttempts path_mad;
    MadAttempts switch_mad;
  };
  // One SaClient::query_subnet_size: the switches' SwitchInfoRecord GetTable.
  struct PendingSize {
    core::QueryId id = 0;  // the Resolver's SubnetSizeQuery
    std::uint64_t seq = 0;  // the node's size queries so far: its events carry it
    MadAttempts mad;
  };
  using TablePart = fabric::TableJoin::Part;  // paths 0, switches 1: a table event's arg is table * 2 + part
  static TableKind table_kind(TablePart part);  // the part's TableTimer
  SaQuery table_query(TablePart part) const;    // what the part costs the SA
  // sm-restart --lid-change: when the cached paths carry the new DLIDs (sim/simulator_renewal.cpp).
  struct Renewal {
    std::int64_t sm_change_ns = -1;
    std::uint64_t in_use_left = 0;   // working-set paths (node, destination) still on an old DLID
    std::uint32_t nodes_left = 0;    // nodes with a path still on an old DLID
    std::int64_t in_use_done_ns = -1;
    std::int64_t all_done_ns = -1;
  };
  // A connect (resolve request) in progress; `weight` connects complete together.
  struct Slot {
    std::int64_t issued_ns = 0;
    std::uint32_t dest = 0;
    std::uint32_t weight = 1;
    std::uint32_t rank = 0;  // global rank index, or kNoRank
  };
  struct Node {
    std::unique_ptr<NodeSink> sink;
    std::unique_ptr<core::Resolver> resolver;  // null for per-process
    std::int64_t wake_at = -1;
    std::int64_t connects_from_ns = 0;  // job-start, boot: its first connect (job start, daemon start)
    std::uint32_t next_offset = 1;  // job-start, cached strategies: next destination (node + offset)
    std::uint32_t outstanding = 0;
    std::vector<Slot> slots;
    std::vector<std::uint32_t> free_slots;
    QueryTable<PendingQuery> queries;
    core::QueryId next_query_id = 1;  // per-process
    // The SaClient's GetTables: in flight (keyed by a node-local number), and on or off with what
    // that rule counts (SA answers, SM changes), as SaClient's own fabric::SaTables.
    QueryTable<PendingTable> tables;
    std::uint64_t last_table = 0;  // the key in `tables` of the latest send_table
    std::uint64_t next_table = 1;
    fabric::SaTables sa_tables{true};  // the simulated MAD layer joins RMPP answers
    bool table_refused = false;       // the sink refused a TableQuery: the Resolver went to GETs
    bool prefetch_settled = false;    // boot: its table answered or given up (see pump_node)
    core::QueryId table_before_run = 0;  // daemons running at time 0: the table they already had
    core::QueryId probe_before_run = 0;  // ... and the table gate's probe that let it go
    std::optional<PendingSize> size;  // its size query in flight
    std::uint64_t sizes_sent = 0;
    std::uint32_t old_paths = 0;      // --lid-change: its paths still on an old DLID
  };
  struct Rank {
    std::uint32_t cursor = 0;  // per-process job-start: connects issued so far
    std::uint32_t outstanding = 0;
    std::uint32_t steps = 0;   // traffic workloads: connects issued so far
  };
  static constexpr std::uint32_t kNoRank = UINT32_MAX;

  void start();
  void schedule_daemon_starts();
  void start_job();
  void handle(const Event& e);
  void after_call(std::uint32_t node);
  void pump_node(std::uint32_t node);
  void pump_rank(std::uint32_t rank);
  void rank_step(std::uint32_t rank);
  void issue(std::uint32_t node, std::uint32_t dest, std::uint32_t weight, std::uint32_t rank);
  void complete(std::uint32_t node, std::uint32_t slot, core::Error error, core::Lid dlid);
  void send_query(std::uint32_t node, core::QueryId id, std::uint32_t dest, std::uint32_t slot);
  void attempt(std::uint32_t node, core::QueryId id, PendingQuery& pending);
  void on_query_answer(const Event& e);
  void on_query_timer(const Event& e);
  void finish_query(std::uint32_t node, core::QueryId id, bool answered);
  // simulator_tables.cpp: the SaClient's GetTables.
  bool send_table(std::uint32_t node, const core::TableQuery& query);
  void table_attempt(std::uint32_t node, std::uint64_t table, PendingTable& pending, TablePart part);
  struct LiveTablePart {
    std::uint64_t table;
    TablePart part;
    PendingTable* pending;
    MadAttempts* mad;  // the part's own: the paths' or the switches'
  };
  std::optional<LiveTablePart> live_table_part(const Event& e);
  void on_table_answer(const Event& e);
  void on_table_timer(const Event& e);
  void table_part_done(std::uint32_t node, std::uint64_t table, TablePart part, bool answered);
  void answer_table_before_run(std::uint32_t node);
  void on_monitor_reply(const Event& e);
  bool send_size(std::uint32_t node, const core::SubnetSizeQuery& query);
  void size_attempt(std::uint32_t node);
  void on_size_answer(const Event& e);
  void on_size_timer(const Event& e);
  void size_done(std::uint32_t node, bool answered);
  core::TableResult subnet_table(std::uint32_t node) const;
  bool prefetch_settled(std::uint32_t node);
  // simulator_renewal.cpp: --lid-change, when the paths in use and all paths carry new DLIDs.
  void watch_renewal();
  void start_renewal();
  void on_path_change(std::uint32_t node, const core::PathChange& change);
  bool in_working_set(std::uint32_t node, std::uint32_t dest) const;
  void sm_changed();
  core::PathRecord path_between(std::uint32_t node, std::uint32_t dest) const;
  std::uint32_t working_set_dest(std::uint32_t node, std::uint32_t index) const;
  bool finished() const;
  void report_progress() const;
  // The run's figures from `from_ns` to now; counters minus those of `before` (the warm-up) if given.
  RunResult figures(std::int64_t from_ns, const RunResult* before) const;

  Scenario sc_;
  std::int64_t now_ns_ = 0;
  SimClock clock_{now_ns_};
  TimeSeries series_;
  SaModel sa_;
  EventQueue queue_;
  fabric::RetryPolicy sa_retry_;  // the SaClient's (FabricOptions mad_timeout, mad_retries)
  fabric::RetryPolicy table_retry_;  // its GetTables' (fabric::table_retry_policy)
  RoundTrips round_trips_;  // each ibatd's MadRequester's: its MAD timers follow the SA's answers
  Monitor monitor_;
  std::vector<Node> nodes_;
  std::vector<Rank> ranks_;
  std::mt19937_64 rng_;
  std::mt19937_64 mad_rng_;  // the SaClient's timers' jitter: the workload's draws do not move
  LatencyHistogram latency_;
  std::uint32_t lid_epoch_ = 0;
  std::uint32_t working_set_ = 0;
  std::int64_t traffic_end_ns_ = 0;
  std::int64_t job_start_ns_ = 0;      // --warm-s: the job's start, where the figures count from
  std::shared_ptr<const RunResult> warmup_;  // --warm-s: the figures of [0, job start)
  std::uint64_t cursors_active_ = 0;   // job-start: nodes/ranks with connects left to issue
  std::uint64_t slots_in_use_ = 0;
  bool before_run_ = true;               // the constructor: running daemons get their tables free
  std::uint64_t tables_before_run_ = 0;  // answered in the constructor, counted in no figure
  Renewal renewal_;
  RunResult result_;
};

}  // namespace ibat::sim
