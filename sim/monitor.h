// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The port monitor of every simulated ibatd (src/fabric/port_monitor.*, fabric_port.cpp), as MADs
// on the simulator's clock: a 0-hop PortInfo to its own port every poll (local: counted, never
// reaches the SM), and the SM/SA checks and the SM-state refresh that the daemon's own
// fabric::PortMonitorLogic decides, one per node, driven by the same events as in ibatd (a poll, a
// check MAD answered or timed out, a remote MAD of the node timed out, an SA answer heard, a trap
// subscription confirmed, an SM change). Every remote MAD runs MadRequester's attempts
// (sim/mad_attempts.h) as SA/SM arrivals in the SA model, so the SA load includes them, each timer
// raised to the node's round trip to the SA (or, for SMInfo, the SM: sim/round_trips.h). See
// docs/simulator.md "Monitoring MADs".
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "fabric/fabric_options.h"
#include "fabric/port_monitor_logic.h"
#include "fabric/retry_policy.h"
#include "sim/event_queue.h"
#include "sim/mad_attempts.h"
#include "sim/query_table.h"
#include "sim/round_trips.h"
#include "sim/sa_model.h"

namespace ibat::sim {

// The daemon's fabric options the monitor reads; the defaults are ibatd's, on a host without HCA
// port events (ibat-sim's command line models one with them unless --no-hca-events).
// fabric::MonitorSettings::of derives what applies, as in FabricPort: the routine check only
// without events, the refresh spread only with them, each check MAD min(mad_timeout, poll / 4).
struct MonitorOptions {
  bool enabled = true;
  std::int64_t poll_ns = 1'000'000'000;             // fabric.poll_interval_ms
  std::int64_t sm_check_ns = 60'000'000'000;        // fabric.sm_check_interval_s (x [1, 1.5))
  std::int64_t refresh_spread_ns = std::chrono::nanoseconds(fabric::kDefaultSmRefreshSpread).count();  // fabric.sm_refresh_spread_ms
  bool hca_events = false;       // the HCA's port events are live (CLIENT_REREGISTER)
  bool running_at_start = true;  // false: each daemon starts at its start_daemon()
};

struct MonitorTotals {
  std::uint64_t remote_mads = 0;  // attempts sent to the SM/SA (SA arrivals)
  std::uint64_t local_mads = 0;   // 0-hop PortInfo polls of the own port
  std::uint64_t full_checks = 0;
  std::uint64_t routine_checks = 0;
  std::uint64_t timeouts = 0;     // remote attempts whose timer fired first
};

class Monitor {
 public:
  // Daemons already running at time 0 (MonitorOptions::running_at_start): subscriptions
  // confirmed, random poll phase, each one's last check settled at a random time within one
  // routine interval before. Otherwise none runs before its start_daemon().
  Monitor(const MonitorOptions& options, std::uint32_t nodes, const fabric::RetryPolicy& sa_retry,
          RoundTrips& round_trips, std::uint64_t seed, EventQueue& queue, SaModel& sa);

  void start();  // schedules every running node's first due check
  // The daemon of `node` starts (FabricPort::start): its first poll, at once, finds the SM, so it
  // subscribes to traps 64/65, reads the broadcast group and runs a full check; it polls every
  // poll interval from now on.
  void start_daemon(std::uint32_t node, std::int64_t now_ns);
  void handle(const Event& e, std::int64_t now_ns);  // monitor_poll, monitor_reply, monitor_lost
  // A remote MAD attempt of `node` sent at `sent_ns` (a path query's, a table's) timed out: a full
  // check once its back-off allows, unless the SA answered the node since (PortMonitorLogic).
  void on_remote_timeout(std::uint32_t node, std::int64_t now_ns, std::int64_t sent_ns);
  // An answer from the SA reached `node` (MadRequester reports every response's source).
  void on_remote_answer(std::uint32_t node, std::int64_t now_ns);
  // The node saw an SM change: a full check next poll; re-subscribe and re-read the broadcast
  // group when its PortMonitorLogic says (within the refresh spread with HCA events).
  void on_sm_changed(std::uint32_t node, std::int64_t now_ns);
  // MCMemberRecord answers `node` received: with its GetTables, what the SaClient counts as the SA
  // answering (sim/simulator_tables.cpp).
  std::uint64_t broadcast_answers(std::uint32_t node) const {
    return nodes_.empty() ? 0 : nodes_[node].broadcast_answers;
  }
  // Totals, with the local polls of [0, end_ns] counted in closed form.
  MonitorTotals totals(std::int64_t end_ns) const;

 private:
  enum class Purpose : std::uint8_t { sm_info, sub_check, subscribe, mcmember };
  struct Mad {
    Purpose purpose = Purpose::sm_info;
    MadAttempts attempts;
  };
  static constexpr std::int64_t kNotStarted = INT64_MAX;
  struct NodeState {
    NodeState(const fabric::MonitorSettings& settings, std::uint64_t seed) : logic(settings, seed) {}
    fabric::PortMonitorLogic logic;   // the daemon's own: checks, subscriptions, refresh
    std::int64_t phase_ns = 0;        // polls at phase + k * poll; kNotStarted before the start
    std::int64_t poll_at = -1;        // the scheduled monitor_poll, -1 if none
    std::uint64_t broadcast_answers = 0;
    std::uint64_t next_mad = 1;
    QueryTable<Mad> mads;
  };

  void poll(std::uint32_t n, std::int64_t now_ns);
  void refresh(std::uint32_t n, std::int64_t now_ns);  // trap subscriptions and the broadcast group
  void send(std::uint32_t n, Purpose purpose, std::int64_t now_ns);
  void attempt(std::uint32_t n, std::uint64_t id, Mad& mad, std::int64_t now_ns);
  const fabric::RetryPolicy& policy_of(Purpose purpose) const;
  static Manager manager_of(Purpose purpose) { return purpose == Purpose::sm_info ? Manager::sm : Manager::sa; }
  void done(std::uint32_t n, Purpose purpose, bool answered, std::int64_t now_ns);
  void ask(std::uint32_t n, fabric::CheckMad mad, std::int64_t now_ns);  // the check's next MAD, or its end
  void schedule(std::uint32_t n, std::int64_t now_ns);
  std::int64_t next_poll(const NodeState& s, std::int64_t t) const;  // first poll at or after t

  MonitorOptions options_;
  fabric::MonitorSettings settings_;  // FabricPort's, from the options and the MAD timeout
  fabric::RetryPolicy sa_retry_;     // the SM-change MADs: the SaClient's
  RoundTrips& round_trips_;
  EventQueue& queue_;
  SaModel& sa_;
  std::mt19937_64 rng_;
  std::vector<NodeState> nodes_;
  MonitorTotals totals_;
};

}  // namespace ibat::sim
