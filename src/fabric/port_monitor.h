// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitor: polls, every `interval`, PortInfo of the local port (directed-route SMP, 0 hops:
// umad_get_port() is a stale snapshot under umad2sim; a local MAD that costs the SM nothing).
// Only when SmCheckSchedule says so does it also ask SMInfo from the SM LID PortInfo names (GUID,
// ActCount, state) and whether the SA still holds our subscription: at start, after a local change
// or a suspect() (an SA timeout, a port event), and at the slow routine interval.
// SmChangeDetector turns the samples into events (docs/fabric.md "Port and SM monitoring").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/resolve_types.h"
#include "fabric/mad_requester.h"
#include "fabric/port_events.h"
#include "fabric/sm_change_detector.h"
#include "fabric/sm_check_schedule.h"

namespace ibat::fabric {

class PortMonitor {
 public:
  struct Events {
    std::function<void(const core::LocalPort&, std::uint8_t sm_sl)> on_local_port;
    std::function<void()> on_sm_changed;
    // Optional: asks the SA at sm_lid whether it still holds our state; `done(nullopt)` when
    // that cannot be told (nothing confirmed to look for, no answer).
    std::function<void(core::Lid sm_lid, std::function<void(std::optional<bool>)> done)> check_sa_state;
  };

  // `port_number`: the local port the PortInfo SMP asks about (attribute modifier).
  // `sm_check_interval`: the routine check's interval; zero: none (port events are live).
  PortMonitor(asio::io_context& loop, MadRequester& requester, const core::Gid& port_gid,
              std::uint8_t port_number, core::Duration interval, core::Duration sm_check_interval,
              const RetryPolicy& policy, Events events);

  void start();  // first poll at once
  void stop();
  std::optional<core::LocalPort> local_port() const;
  // A MAD to the SM or SA timed out: something may have changed there; a full check at the next
  // poll, backed off while such checks keep finding nothing (SmCheckSchedule).
  void suspect_timeout() { schedule_.suspect_timeout(); }
  // An event from the HCA: a client-reregister is an SM change, reported at once; every event
  // polls the port now with a full check.
  void on_port_event(PortEvent event);

 private:
  void poll();
  void on_port_info(const MadAnswer* answer);
  void ask_sm_info();
  void on_sm_info(const MadAnswer* answer);
  void check_sa_state();
  void finish_poll();

  asio::io_context& loop_;
  MadRequester& requester_;
  core::Gid port_gid_;
  std::uint8_t port_number_;
  core::Duration interval_;
  RetryPolicy policy_;
  Events events_;
  asio::steady_timer timer_;
  bool running_ = false;
  bool polling_ = false;  // between poll() and finish_poll()
  std::uint64_t poll_number_ = 0;  // tells a stale SA-state answer from the current poll's
  std::optional<MadRequester::Handle> in_flight_;
  std::chrono::steady_clock::time_point poll_started_;
  PollObservation observation_;
  SmCheck check_ = SmCheck::none;  // what this poll asks beyond PortInfo
  SmChangeDetector detector_;
  SmCheckSchedule schedule_;
};

}  // namespace ibat::fabric
