// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Discrete-event simulator driving real Resolvers: see simulator.h and docs/scale.md.
#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ibat::sim {

namespace {

constexpr std::uint64_t kSubnetPrefix = 0xfe80000000000000ULL;
constexpr std::uint64_t kGuidBase = 0x0002c90300000000ULL;
constexpr std::int64_t kMinTickStepNs = 1'000;  // guard if next_wakeup() does not move past now

std::int64_t seconds_to_ns(double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); }

// boot and --warm-s: the daemons start during the run; otherwise they are running at time 0.
bool daemons_start(const Scenario& s) { return s.workload == Workload::boot || s.warm_s.has_value(); }

// per-process runs no daemon, hence no port monitor.
MonitorOptions daemon_monitor(const Scenario& s) {
  MonitorOptions m = s.monitor;
  if (s.strategy == Strategy::per_process) m.enabled = false;
  m.running_at_start = !daemons_start(s);
  return m;
}

// The fabric SaClient's MAD policy (FabricOptions: mad_timeout, mad_retries; the rest as ibatd's).
fabric::RetryPolicy sa_retry_policy(const Scenario& s) {
  return fabric::RetryPolicy{std::chrono::nanoseconds(s.mad_timeout_ns), s.mad_retries};
}

}  // namespace

core::Gid Simulator::gid_of(std::uint32_t node) {
  return core::Gid::from_parts(kSubnetPrefix, kGuidBase + node + 1);
}

std::uint32_t Simulator::node_of(const core::Gid& gid) {
  return static_cast<std::uint32_t>(gid.interface_id() - kGuidBase - 1);
}

core::Lid Simulator::lid_of(std::uint32_t node) const {
  const std::uint32_t lid = 1 + node + lid_epoch_ * sc_.nodes;
  return core::Lid{static_cast<std::uint16_t>(lid)};
}

void Simulator::NodeSink::send_path_query(const core::PathQuery& query) {
  if (sim_.before_run_) {  // the table gate's probe of a daemon running at time 0: see answer_table_before_run
    sim_.nodes_[node_].probe_before_run = query.id;
    return;
  }
  std::uint32_t dest = UINT32_MAX;
  if (query.dgid) {
    dest = node_of(*query.dgid);
  } else if (query.dlid) {
    dest = static_cast<std::uint32_t>(query.dlid->value - 1) % sim_.sc_.nodes;
  }
  sim_.send_query(node_, query.id, dest, 0);
}

// A GET's or a GetTable's (SaClient::cancel): resends stop, what the SA already has it computes.
void Simulator::NodeSink::cancel_query(core::QueryId id) {
  Node& node = sim_.nodes_[node_];
  node.queries.erase(id);
  if (PendingTable* t = node.tables.find(node.last_table); t != nullptr && t->id == id) node.tables.erase(node.last_table);
}

Simulator::Simulator(const Scenario& scenario)
    : sc_(scenario),
      series_(scenario.bucket_ns),
      sa_(scenario.sa, series_),
      sa_retry_(sa_retry_policy(scenario)),
      table_retry_(fabric::table_retry_policy(sa_retry_)),
      round_trips_(scenario.nodes, scenario.mad_timers_follow_rtt),
      monitor_(daemon_monitor(scenario), scenario.nodes, sa_retry_, round_trips_, scenario.seed, queue_, sa_),
      rng_(scenario.seed),
      mad_rng_(scenario.seed ^ 0x6d61642d74696d65ULL) {
  if (sc_.nodes < 2 || sc_.nodes > 20'000) throw std::invalid_argument("nodes must be in [2, 20000]");
  if (sc_.ranks < 1) throw std::invalid_argument("ranks must be >= 1");
  if (sc_.window < 1) throw std::invalid_argument("window must be >= 1");
  const bool daemons = sc_.strategy != Strategy::per_process;
  if ((sc_.workload == Workload::boot || sc_.workload == Workload::idle) && !daemons) {
    throw std::invalid_argument("boot and idle are about daemons: not with per-process");
  }
  if (sc_.warm_s && (sc_.workload != Workload::job_start || !daemons || *sc_.warm_s < 0)) {
    throw std::invalid_argument("warm-s: job-start with daemons only, and >= 0");
  }
  if (sc_.start_spread_s < 0) throw std::invalid_argument("start spread must be >= 0");
  working_set_ = std::min(sc_.working_set, sc_.nodes - 1);
  if (sc_.workload != Workload::job_start && sc_.workload != Workload::boot) {
    traffic_end_ns_ = seconds_to_ns(sc_.duration_s);
  }
  if (sc_.warm_s) job_start_ns_ = seconds_to_ns(*sc_.warm_s);
  if (sc_.workload == Workload::sm_restart && !sc_.sm_restart_at_s) {
    sc_.sm_restart_at_s = sc_.duration_s / 3;
  }
  if (sc_.sm_restart_at_s) {
    const std::int64_t down = seconds_to_ns(*sc_.sm_restart_at_s);
    const std::int64_t up = down + seconds_to_ns(sc_.sa_down_s);
    if (up > down) sa_.add_outage(down, up);
    queue_.push(up, EventKind::sm_changed, 0, 0);
  }
  if (sc_.sa_outage_at_s && sc_.sa_outage_s > 0) {
    const std::int64_t from = seconds_to_ns(*sc_.sa_outage_at_s);
    sa_.add_outage(from, from + seconds_to_ns(sc_.sa_outage_s));
  }

  // With prefetch a node's table fills its cache only while there is room: no cap then.
  const bool prefetch = sc_.policy.prefetch != core::Prefetch::off;
  if (sc_.workload == Workload::job_start && !sc_.sm_restart_at_s && sc_.job_start_capacity > 0 && !prefetch) {
    sc_.policy.capacity = std::min(sc_.policy.capacity, sc_.job_start_capacity);
  }

  // A job's wire-up (and a boot's) waits as long as the daemon lets it: each node's window of
  // connects waits window x N / sa_rate (5 s at 4,000 nodes), longer than the default deadline.
  const bool all_pairs = sc_.workload == Workload::job_start || sc_.workload == Workload::boot;
  if (all_pairs && !sc_.request_timeout) {
    sc_.request_timeout = sc_.policy.max_request_timeout;
  }
  if (sc_.pace != Pace::policy) sc_.policy.sa_adaptive = false;
  if (sc_.known_subnet) sc_.policy.expected_subnet_ports = sc_.nodes;
  if (sc_.pace == Pace::oracle) {
    sc_.policy.sa_rate = 0.8 * sc_.sa.get_rate_per_s() / sc_.nodes;
    sc_.policy.sa_burst = 1;
  }
  nodes_.resize(sc_.nodes);
  ranks_.resize(static_cast<std::size_t>(sc_.nodes) * sc_.ranks);
  for (std::uint32_t n = 0; n < sc_.nodes; ++n) {
    Node& node = nodes_[n];
    if (sc_.strategy == Strategy::per_process) continue;
    node.sink = std::make_unique<NodeSink>(*this, n);
    node.resolver = std::make_unique<core::Resolver>(sc_.policy, clock_, *node.sink, sc_.seed + n);
    if (daemons_start(sc_)) continue;  // its port comes up at its start
    node.resolver->on_local_port(core::LocalPort{gid_of(n), lid_of(n), lid_of(0), true});
    node.resolver->tick();  // the Resolver probes the SA, then sends its table, from tick()
    answer_table_before_run(n);
  }
  before_run_ = false;
  if (sc_.lid_change && sc_.sm_restart_at_s && sc_.strategy == Strategy::ibat) watch_renewal();
}

Simulator::~Simulator() = default;

bool Simulator::finished() const {
  return now_ns_ >= traffic_end_ns_ && cursors_active_ == 0 && slots_in_use_ == 0;
}

RunResult Simulator::run() {
  const auto wall_start = std::chrono::steady_clock::now();
  start();
  std::int64_t next_progress_ns = sc_.progress_ns;
  while (!queue_.empty() && !finished()) {
    const Event e = queue_.pop();
    if (sc_.progress_ns > 0 && e.time_ns >= next_progress_ns) {
      report_progress();
      next_progress_ns = (e.time_ns / sc_.progress_ns + 1) * sc_.progress_ns;
    }
    now_ns_ = e.time_ns;
    ++result_.events;
    handle(e);
  }
  RunResult result = figures(job_start_ns_, warmup_.get());
  result.warmup = warmup_;
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

// One line of the run so far (--progress-s), for runs that take minutes: where the SA's work and
// the MAD timers stand.
void Simulator::report_progress() const {
  const RunResult r = figures(std::max<std::int64_t>(0, now_ns_ - sc_.progress_ns), nullptr);  // max_wait: this window's
  std::fprintf(stderr,
               "t=%.0fs gets=%llu tables=%llu monitor=%llu timeouts get/table/monitor=%llu/%llu/%llu "
               "sa_busy=%.1fs window_max_wait=%.0fms failed=%llu tables_answered=%llu tables_failed=%llu\n",
               static_cast<double>(now_ns_) / 1e9, static_cast<unsigned long long>(r.sa_queries),
               static_cast<unsigned long long>(r.sa_tables), static_cast<unsigned long long>(r.monitor_remote_mads),
               static_cast<unsigned long long>(r.get_timeouts), static_cast<unsigned long long>(r.table_timeouts),
               static_cast<unsigned long long>(r.monitor_timeouts), r.sa_busy_s, r.sa_max_wait_ms,
               static_cast<unsigned long long>(r.failures), static_cast<unsigned long long>(r.tables_answered),
               static_cast<unsigned long long>(r.tables_failed));
}

void Simulator::start() {
  if (daemons_start(sc_)) {
    schedule_daemon_starts();
  } else {
    monitor_.start();
  }
  switch (sc_.workload) {
    case Workload::job_start:
      if (sc_.strategy == Strategy::per_process) {
        cursors_active_ = ranks_.size();
        for (std::uint32_t r = 0; r < ranks_.size(); ++r) pump_rank(r);
        return;
      }
      cursors_active_ = sc_.nodes;
      result_.note = "ranks of a node run in lockstep: the R*R connects of one (node, destination) "
                     "are one Resolver::resolve counted with weight R*R";
      if (sc_.warm_s) {
        queue_.push(job_start_ns_, EventKind::job_start, 0, 0);
        result_.note += "; the daemons started warm_s before the job: the figures count from the job's "
                        "start, the warm-up's are in `warmup`";
        return;
      }
      for (std::uint32_t n = 0; n < sc_.nodes; ++n) after_call(n);  // pumps, then schedules the tick
      return;
    case Workload::boot:
      cursors_active_ = sc_.nodes;  // each daemon's connects begin at its start
      result_.note = sc_.policy.prefetch == core::Prefetch::off
                         ? "boot: no daemon asks the SA for a path nobody asked for, so each daemon resolves "
                           "every other node once from its start (window connects at once): N(N-1) GETs"
                         : "boot: each daemon's GetTable prefetches the subnet; once it has settled (answered, "
                           "given up or refused) the daemon resolves every other node once (window at once): "
                           "cache hits, or GETs for what the table did not bring";
      return;
    case Workload::idle:
      queue_.push(traffic_end_ns_, EventKind::run_end, 0, 0);
      return;
    case Workload::churn:
    case Workload::sm_restart: break;
  }
  const double period_s = 1.0 / sc_.connects_per_rank_s;
  std::uniform_real_distribution<double> phase(0.0, period_s);
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    queue_.push(seconds_to_ns(phase(rng_)), EventKind::rank_step, 0, r);
  }
}

// Every daemon starts at a uniform random time in [0, start_spread_s), from its own random stream
// (the workload's draws do not move); a node's connects begin once both it and the job started.
void Simulator::schedule_daemon_starts() {
  std::mt19937_64 start_rng(sc_.seed ^ 0x737461727473ULL);
  std::uniform_real_distribution<double> spread(0.0, sc_.start_spread_s);
  for (std::uint32_t n = 0; n < sc_.nodes; ++n) {
    const std::int64_t at = sc_.start_spread_s > 0 ? seconds_to_ns(spread(start_rng)) : 0;
    nodes_[n].connects_from_ns = std::max(at, job_start_ns_);
    queue_.push(at, EventKind::daemon_start, n, 0);
  }
}

// --warm-s: the warm-up's figures are taken and the job's connects begin.
void Simulator::start_job() {
  warmup_ = std::make_shared<const RunResult>(figures(0, nullptr));
  latency_ = LatencyHistogram{};
  for (std::uint32_t n = 0; n < sc_.nodes; ++n) after_call(n);
}

void Simulator::handle(const Event& e) {
  switch (e.kind) {
    case EventKind::tick: {
      Node& node = nodes_[e.node];
      if (node.wake_at != e.time_ns) return;  // superseded by an earlier wake-up
      node.wake_at = -1;
      node.resolver->tick();
      after_call(e.node);
      return;
    }
    case EventKind::query_answer: on_query_answer(e); return;
    case EventKind::query_timeout: on_query_timer(e); return;
    case EventKind::table_answer: on_table_answer(e); return;
    case EventKind::table_timeout: on_table_timer(e); return;
    case EventKind::size_answer: on_size_answer(e); return;
    case EventKind::size_timeout: on_size_timer(e); return;
    case EventKind::rank_step: rank_step(static_cast<std::uint32_t>(e.arg)); return;
    case EventKind::sm_changed: sm_changed(); return;
    case EventKind::monitor_reply: on_monitor_reply(e); return;
    case EventKind::monitor_poll:
    case EventKind::monitor_lost:
    case EventKind::monitor_refresh: monitor_.handle(e, now_ns_); return;
    case EventKind::daemon_start:
      monitor_.start_daemon(e.node, now_ns_);
      nodes_[e.node].resolver->on_local_port(core::LocalPort{gid_of(e.node), lid_of(e.node), lid_of(0), true});
      after_call(e.node);
      return;
    case EventKind::job_start: start_job(); return;
    case EventKind::run_end: return;  // finished() holds from now on
  }
}

// After any call into a node's Resolver: issue more job-start or boot connects and keep exactly
// one tick scheduled at its next_wakeup().
void Simulator::after_call(std::uint32_t n) {
  Node& node = nodes_[n];
  if (sc_.workload == Workload::job_start || sc_.workload == Workload::boot) pump_node(n);
  const auto wake = node.resolver->next_wakeup();
  if (!wake) return;
  std::int64_t t = wake->time_since_epoch().count();
  if (t <= now_ns_) t = now_ns_ + kMinTickStepNs;
  if (node.wake_at < 0 || t < node.wake_at) {
    node.wake_at = t;
    queue_.push(t, EventKind::tick, n, 0);
  }
}

// job-start, cached strategies, and boot: from its connects_from_ns on, the node resolves
// destination nodes node+1, node+2, ... with at most `window` outstanding; in job-start each
// resolve stands for the R*R connects of its ranks to that node, in boot for the daemon's own
// (with prefetch, once its table has settled).
void Simulator::pump_node(std::uint32_t n) {
  Node& node = nodes_[n];
  if (now_ns_ < node.connects_from_ns) return;
  if (sc_.workload == Workload::boot && !prefetch_settled(n)) return;
  const std::uint32_t weight = sc_.workload == Workload::boot ? 1 : sc_.ranks * sc_.ranks;
  while (node.next_offset < sc_.nodes && node.outstanding < sc_.window) {
    const std::uint32_t dest = (n + node.next_offset) % sc_.nodes;
    if (++node.next_offset == sc_.nodes) --cursors_active_;
    issue(n, dest, weight, kNoRank);
  }
}

// job-start, per-process: rank connects to every rank of node+1, node+2, ... one SA query each,
// at most `window` outstanding.
void Simulator::pump_rank(std::uint32_t r) {
  Rank& rank = ranks_[r];
  const std::uint32_t n = r / sc_.ranks;
  const std::uint32_t total = sc_.ranks * (sc_.nodes - 1);
  while (rank.cursor < total && rank.outstanding < sc_.window) {
    const std::uint32_t dest = (n + 1 + rank.cursor / sc_.ranks) % sc_.nodes;
    if (++rank.cursor == total) --cursors_active_;
    issue(n, dest, 1, r);
  }
}

std::uint32_t Simulator::working_set_dest(std::uint32_t n, std::uint32_t index) const {
  const std::uint32_t stride = (sc_.nodes - 1) / working_set_;
  return (n + 1 + index * stride) % sc_.nodes;
}

// churn / sm-restart traffic: one connect per step, then the next step of this rank.
void Simulator::rank_step(std::uint32_t r) {
  if (now_ns_ >= traffic_end_ns_) return;
  Rank& rank = ranks_[r];
  const std::uint32_t n = r / sc_.ranks;
  std::uint32_t dest = 0;
  std::int64_t next_ns = 0;
  if (sc_.workload == Workload::sm_restart) {
    dest = working_set_dest(n, (r % sc_.ranks + rank.steps * sc_.ranks) % working_set_);
    next_ns = now_ns_ + seconds_to_ns(1.0 / sc_.connects_per_rank_s);
  } else {
    std::uniform_int_distribution<std::uint32_t> pick(1, sc_.nodes - 1);
    dest = (n + pick(rng_)) % sc_.nodes;
    std::exponential_distribution<double> gap(sc_.connects_per_rank_s);
    next_ns = now_ns_ + std::max<std::int64_t>(1, seconds_to_ns(gap(rng_)));
  }
  ++rank.steps;
  if (next_ns < traffic_end_ns_) queue_.push(next_ns, EventKind::rank_step, 0, r);
  issue(n, dest, 1, r);
  if (nodes_[n].resolver) after_call(n);
}

void Simulator::issue(std::uint32_t n, std::uint32_t dest, std::uint32_t weight, std::uint32_t rank) {
  Node& node = nodes_[n];
  std::uint32_t slot = 0;
  if (node.free_slots.empty()) {
    slot = static_cast<std::uint32_t>(node.slots.size());
    node.slots.emplace_back();
  } else {
    slot = node.free_slots.back();
    node.free_slots.pop_back();
  }
  node.slots[slot] = Slot{now_ns_, dest, weight, rank};
  ++node.outstanding;
  ++slots_in_use_;
  if (rank != kNoRank) ++ranks_[rank].outstanding;
  result_.requests += weight;

  if (!node.resolver) {
    send_query(n, node.next_query_id++, dest, slot);
    return;
  }
  core::ResolveRequest request;
  request.target = gid_of(dest);
  request.timeout = sc_.request_timeout;
  // rdma_cm's ServiceIDs: iSER's port, or an ephemeral port (32768 on) for each (destination, rank).
  constexpr std::uint16_t kIserPort = 3260, kEphemeralBase = 32768, kEphemeralPorts = 28'000;
  if (sc_.service_ids == Scenario::ServiceIds::storage) request.service_id = core::rdma_cm_tcp_service_id(kIserPort);
  if (sc_.service_ids == Scenario::ServiceIds::per_process)
    request.service_id = core::rdma_cm_tcp_service_id(static_cast<std::uint16_t>(
        kEphemeralBase + (std::uint64_t{dest} * sc_.ranks + rank % sc_.ranks) % kEphemeralPorts));
  if (sc_.qos_classes > 0) request.qos_class = static_cast<std::uint16_t>(1 + (dest + rank) % sc_.qos_classes);
  node.resolver->resolve(request, [this, n, slot](core::RequestId, const core::ResolveResult& r) {
    complete(n, slot, r.error, r.path.dlid);
  });
}

void Simulator::complete(std::uint32_t n, std::uint32_t slot, core::Error error, core::Lid dlid) {
  Node& node = nodes_[n];
  const Slot s = node.slots[slot];
  node.free_slots.push_back(slot);
  --node.outstanding;
  --slots_in_use_;
  const bool ok = error == core::Error::ok;
  latency_.add(now_ns_ - s.issued_ns, s.weight);
  series_.add_completions(now_ns_, ok ? s.weight : 0, ok ? 0 : s.weight);
  if (!ok) result_.failures += s.weight;
  if (ok && dlid != lid_of(s.dest)) result_.stale_lid_served += s.weight;
  result_.completion_s = static_cast<double>(now_ns_) / 1e9;
  if (s.rank != kNoRank) {
    --ranks_[s.rank].outstanding;
    if (sc_.workload == Workload::job_start) pump_rank(s.rank);
  }
}

void Simulator::send_query(std::uint32_t n, core::QueryId id, std::uint32_t dest, std::uint32_t slot) {
  nodes_[n].queries.put(id, PendingQuery{dest, slot, {}});
  attempt(n, id, *nodes_[n].queries.find(id));
}

// An ibatd's GET waits as its MadRequester's round trip asks; each process's own (per-process)
// keeps the fixed timer.
void Simulator::attempt(std::uint32_t n, core::QueryId id, PendingQuery& pending) {
  const fabric::RetryPolicy policy = nodes_[n].resolver ? round_trips_.applied_to(n, Manager::sa, sa_retry_) : sa_retry_;
  pending.mad.send(policy, mad_rng_, sa_, queue_, now_ns_, n, id, EventKind::query_answer, EventKind::query_timeout);
}

void Simulator::on_query_answer(const Event& e) {
  const PendingQuery* pending = nodes_[e.node].queries.find(e.arg);
  if (pending == nullptr || !pending->mad.is_answer(e.time_ns)) return;  // cancelled, or a duplicate
  monitor_.on_remote_answer(e.node, now_ns_);
  if (nodes_[e.node].resolver) round_trips_.on_answer(e.node, Manager::sa, pending->mad, now_ns_);
  finish_query(e.node, e.arg, true);
}

void Simulator::on_query_timer(const Event& e) {
  Node& node = nodes_[e.node];
  PendingQuery* pending = node.queries.find(e.arg);
  if (pending == nullptr || !pending->mad.is_timer(e.time_ns)) return;
  ++result_.get_timeouts;
  if (node.resolver) round_trips_.on_timeout(e.node, Manager::sa, pending->mad, now_ns_);
  if (node.resolver) monitor_.on_remote_timeout(e.node, now_ns_, pending->mad.sent_ns());  // may be the SM restarting
  if (pending->mad.next_attempt(sa_retry_)) return attempt(e.node, e.arg, *pending);
  finish_query(e.node, e.arg, false);
}

void Simulator::finish_query(std::uint32_t n, core::QueryId id, bool answered) {
  Node& node = nodes_[n];
  const PendingQuery q = *node.queries.find(id);
  node.queries.erase(id);
  core::QueryResult result;
  if (answered) {
    node.sa_tables.on_sa_answer();
    result.path = path_between(n, q.dest);
  } else {
    result.error = core::Error::timeout;
  }
  if (!node.resolver) {
    complete(n, q.slot, result.error, result.path.dlid);
    return;
  }
  node.resolver->on_query_result(id, result);
  after_call(n);
}

core::PathRecord Simulator::path_between(std::uint32_t n, std::uint32_t dest) const {
  core::PathRecord p;
  p.sgid = gid_of(n);
  p.dgid = gid_of(dest);
  p.slid = lid_of(n);
  p.dlid = lid_of(dest);
  p.pkey = sc_.policy.default_pkey;
  p.reversible = true;
  p.numb_path = 1;
  p.mtu_selector = 2;
  p.mtu = 5;  // 4096
  p.rate_selector = 2;
  p.rate = 16;  // 100 Gb/s
  p.pkt_life_selector = 2;
  p.pkt_life = 18;
  p.hop_limit = 0;
  return p;
}

// The restarted SM has swept: LIDs may have moved; every node's port monitor reports it.
void Simulator::sm_changed() {
  if (sc_.lid_change) lid_epoch_ = 1;
  if (sc_.lid_change && sc_.strategy == Strategy::ibat) start_renewal();
  for (std::uint32_t n = 0; n < sc_.nodes; ++n) {
    Node& node = nodes_[n];
    if (!node.resolver) continue;
    node.sa_tables.on_sm_changed();  // as SaClient::on_sm_changed: GetTables on again
    if (sc_.lid_change) node.resolver->on_local_port(core::LocalPort{gid_of(n), lid_of(n), lid_of(0), true});
    if (sc_.strategy == Strategy::flush_on_sm_change) {
      node.resolver->flush_all();
    } else {
      node.resolver->on_sm_changed();
    }
    monitor_.on_sm_changed(n, now_ns_);
    after_call(n);
  }
}

}  // namespace ibat::sim
