// PortMonitor: polls, every `interval`, PortInfo of the local port (directed-route SMP, 0 hops:
// umad_get_port() is a stale snapshot under umad2sim) and then SMInfo from the SM LID it names
// (GUID, ActCount, state), then optionally asks whether the SA still holds our subscription.
// SmChangeDetector turns the samples into events, so a restart or fail-over is reported within
// two poll intervals of the new SM answering.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/resolve_types.h"
#include "fabric/mad_requester.h"
#include "fabric/sm_change_detector.h"

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
  PortMonitor(asio::io_context& loop, MadRequester& requester, const core::Gid& port_gid,
              std::uint8_t port_number, core::Duration interval, const RetryPolicy& policy, Events events);

  void start();  // first poll at once
  void stop();
  std::optional<core::LocalPort> local_port() const;

 private:
  void poll();
  void on_port_info(const MadAnswer* answer);
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
  std::uint64_t poll_number_ = 0;  // tells a stale SA-state answer from the current poll's
  std::optional<MadRequester::Handle> in_flight_;
  std::chrono::steady_clock::time_point poll_started_;
  PollObservation observation_;
  SmChangeDetector detector_;
};

}  // namespace ibat::fabric
