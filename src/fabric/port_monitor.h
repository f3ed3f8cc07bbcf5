// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitor: polls, every poll interval, PortInfo of the local port (directed-route SMP, 0 hops:
// umad_get_port() is a stale snapshot under umad2sim; a local MAD that costs the SM nothing).
// Only when its PortMonitorLogic says so does it also ask SMInfo from the SM LID PortInfo names
// (GUID, ActCount, state) and whether the SA still holds our subscription: at start, after a local
// change or a suspicion (an SA timeout, a port event), and at the slow routine interval; and it
// refreshes the SM state (trap subscriptions, broadcast group) when the logic says.
// SmChangeDetector turns the samples into events (docs/fabric.md "Port and SM monitoring").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/resolve_types.h"
#include "fabric/mad_requester.h"
#include "fabric/port_events.h"
#include "fabric/port_monitor_logic.h"
#include "fabric/sm_change_detector.h"

namespace ibat::fabric {

class PortMonitor {
 public:
  struct Events {
    std::function<void(const core::LocalPort&, std::uint8_t sm_sl)> on_local_port;
    std::function<void()> on_sm_changed;
    // Optional: asks the SA at sm_lid whether it still holds our subscription (asked only once
    // both are confirmed); `done(nullopt)` when that cannot be told (no answer).
    std::function<void(core::Lid sm_lid, std::function<void(std::optional<bool>)> done)> check_sa_state;
    // Optional: re-subscribe to the traps and re-read the broadcast group (the first SM, an SM change).
    std::function<void()> refresh_sm_state;
  };

  // `port_number`: the local port the PortInfo SMP asks about (attribute modifier).
  PortMonitor(asio::io_context& loop, MadRequester& requester, const core::Gid& port_gid,
              std::uint8_t port_number, const MonitorSettings& settings, Events events);

  void start();  // first poll at once
  void stop();
  std::optional<core::LocalPort> local_port() const;
  // A remote MAD attempt sent at `sent_at` timed out: unless the SM's LID answered since, a full
  // check at the next poll, backed off while such checks keep finding nothing (SmCheckSchedule).
  void remote_timeout(core::TimePoint sent_at) { logic_.remote_timeout(sent_at); }
  // The SM's LID answered a MAD of the port at `at`.
  void heard(core::TimePoint at) { logic_.heard(at); }
  // The SA accepted a trap subscription.
  void subscription_confirmed() { logic_.subscription_confirmed(); }
  // The first SM LID is known: refresh the SM state at once.
  void sm_found();
  // An event from the HCA: a client-reregister is an SM change, reported at once; every event
  // polls the port now with a full check.
  void on_port_event(PortEvent event);

 private:
  void poll();
  void on_port_info(const MadAnswer* answer);
  void ask_sm_info();
  void on_sm_info(const MadAnswer* answer);
  void check_sa_state();
  void ask(CheckMad mad);
  void finish_poll();
  void sm_changed();
  void refresh_when_due();

  static core::TimePoint now();

  asio::io_context& loop_;
  MadRequester& requester_;
  core::Gid port_gid_;
  std::uint8_t port_number_;
  core::Duration interval_;
  RetryPolicy policy_;
  Events events_;
  asio::steady_timer timer_;
  asio::steady_timer refresh_timer_;
  std::mt19937_64 refresh_rng_;
  bool running_ = false;
  bool polling_ = false;  // between poll() and finish_poll()
  std::uint64_t poll_number_ = 0;  // tells a stale SA-state answer from the current poll's
  std::optional<MadRequester::Handle> in_flight_;
  std::chrono::steady_clock::time_point poll_started_;
  PollObservation observation_;
  SmChangeDetector detector_;
  PortMonitorLogic logic_;
};

}  // namespace ibat::fabric
