// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The port monitor of every simulated ibatd (src/fabric/port_monitor.*, fabric_port.cpp), as MADs
// on the simulator's clock: a 0-hop PortInfo to its own port every poll (local: counted, never
// reaches the SM), and an SM/SA check whenever the daemon's own fabric::SmCheckSchedule says so —
// routine (the subscription check; SMInfo if unanswered) or full (SMInfo, then the subscription
// check). An SM change, and a daemon's start (boot, --warm-s), also (re-)subscribe to traps 64/65
// and (re-)read the broadcast group. Every remote MAD runs MadRequester's attempts
// (sim/mad_attempts.h) as SA/SM arrivals in the SA model, so the SA load includes them, each timer
// raised to the node's round trip to the SA (or, for SMInfo, the SM: sim/round_trips.h). See
// docs/scale.md "Monitoring MADs".
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "fabric/retry_policy.h"
#include "fabric/sm_check_schedule.h"
#include "sim/event_queue.h"
#include "sim/mad_attempts.h"
#include "sim/query_table.h"
#include "sim/round_trips.h"
#include "sim/sa_model.h"

namespace ibat::sim {

// The defaults are a daemon without HCA port events; ibat-sim's command line models one with them
// unless --no-hca-events (no routine check, the refresh spread: FabricPort).
struct MonitorOptions {
  bool enabled = true;
  std::int64_t poll_ns = 1'000'000'000;             // fabric.poll_interval_ms
  std::int64_t sm_check_ns = 60'000'000'000;        // fabric.sm_check_interval_s (x [1, 1.5)); 0: never
  std::int64_t check_timeout_ns = 200'000'000;      // a check MAD: min(mad_timeout, poll / 4)
  std::uint32_t check_retries = 1;                  // ... and one resend
  std::int64_t refresh_spread_ns = 0;               // fabric.sm_refresh_spread_ms; 0: at once
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
  // check once its back-off allows, unless the SA answered the node since (fabric_port.cpp).
  void on_remote_timeout(std::uint32_t node, std::int64_t now_ns, std::int64_t sent_ns);
  // An answer from the SA reached `node` (MadRequester notes every response's source).
  void on_remote_answer(std::uint32_t node, std::int64_t now_ns) {
    if (!nodes_.empty()) nodes_[node].last_heard_ns = now_ns;
  }
  // The node saw an SM change: a full check next poll; re-subscribe and re-read the broadcast
  // group at a random time within refresh_spread_ns (FabricPort: every host sees the change at
  // once, and their MADs together would queue at the SA ahead of the paths' GETs).
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
    explicit NodeState(fabric::SmCheckSchedule s) : schedule(std::move(s)) {}
    fabric::SmCheckSchedule schedule;
    std::int64_t phase_ns = 0;        // polls at phase + k * poll; kNotStarted before the start
    std::int64_t poll_at = -1;        // the scheduled monitor_poll, -1 if none
    fabric::SmCheck check = fabric::SmCheck::none;  // in progress
    bool master_seen = false;
    bool kept = false;
    std::uint8_t subscriptions = 2;   // confirmed trap subscriptions
    std::uint64_t broadcast_answers = 0;
    std::uint64_t sm_changes = 0;     // the SM changes seen: a monitor_refresh of an older one is void
    std::int64_t last_heard_ns = INT64_MIN;  // the SA's last answer to any MAD of the node
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
  void finish(std::uint32_t n, std::int64_t now_ns);
  void schedule(std::uint32_t n, std::int64_t now_ns);
  std::int64_t next_poll(const NodeState& s, std::int64_t t) const;  // first poll at or after t

  MonitorOptions options_;
  fabric::RetryPolicy check_retry_;  // SMInfo and the subscription check (fabric_port.cpp)
  fabric::RetryPolicy sa_retry_;     // the SM-change MADs: the SaClient's
  RoundTrips& round_trips_;
  EventQueue& queue_;
  SaModel& sa_;
  std::mt19937_64 rng_;
  std::vector<NodeState> nodes_;
  MonitorTotals totals_;
};

}  // namespace ibat::sim
