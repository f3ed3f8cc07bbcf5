// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// BusyPoll: after answering a client that asks again at once (a program resolving one path at a
// time), ibatd polls its sockets for a short window instead of going to sleep, and run_loop() is
// the event loop that does so. On an idle host each request of such a client otherwise pays for
// waking the CPU ibatd sleeps on, which costs more than the cached answer itself
// (docs/performance.md, "One resolve at a time"). A connection whose next request comes later than
// the window never makes ibatd poll, so an idle daemon, or one answering now and then, sleeps
// exactly as before; nor does one on a host with more runnable tasks than CPUs (core::SpinPolicy:
// polling would take a CPU from work that wants it). What polling cost is counted (stats "busy_poll").
// One per io_context (an asio service), so the socket servers and the loop find the same one.
#pragma once

#include <chrono>
#include <cstdint>

#include <asio/execution_context.hpp>
#include <asio/io_context.hpp>

#include "core/spin_policy.h"
#include "kernel/run_queue.h"

namespace ibat::server {

class BusyPoll final : public asio::execution_context::service {
 public:
  using Clock = std::chrono::steady_clock;
  static inline asio::execution_context::id id;

  explicit BusyPoll(asio::execution_context& context) : asio::execution_context::service(context) {}

  // Where arm() samples the host's run queue (tests stand in for /proc/loadavg).
  void set_run_queue_sampler(kernel::RunQueueSampler sampler) { sampler_ = sampler; }
  // How long to poll after a reply; zero turns polling off.
  void set_window(std::chrono::microseconds window) { window_ = window; }
  std::chrono::microseconds window() const { return window_; }
  bool enabled() const { return window_.count() > 0; }

  // Whether a request that came `since_reply` after its connection's previous reply left marks
  // a client that asks again at once.
  bool asks_again_at_once(Clock::duration since_reply) const { return enabled() && since_reply <= window_; }
  // A reply left at `now` for such a client: poll until `now` + the window, unless the host has
  // more runnable tasks than CPUs (SpinPolicy; samples the run queue every 10 ms at most).
  void arm(Clock::time_point now);
  // Whether the loop should poll rather than sleep at `now`.
  bool polling(Clock::time_point now) const { return now < until_; }

  // A spell of polling begins; it ends having polled `idle` without work, `caught`: work came in.
  void begin_spell() { ++counters_.spells; }
  void end_spell(Clock::duration idle, bool caught);

  struct Counters {
    std::uint64_t spells = 0;    // times the loop polled instead of sleeping
    std::uint64_t caught = 0;    // spells that ended with work arriving (a wake-up saved)
    Clock::duration polled{};    // time spent polling with nothing to do: the CPU it cost
  };
  const Counters& counters() const { return counters_; }
  // Times polling stopped because the host was crowded (SpinPolicy).
  std::uint64_t crowded_stops() const { return spin_.stops(); }

 private:
  void shutdown() override {}

  std::chrono::microseconds window_{0};
  Clock::time_point until_{};
  core::SpinPolicy spin_;
  kernel::RunQueueSampler sampler_ = kernel::sample_run_queue;
  Counters counters_;
};

// Runs `loop` until it is stopped or out of work, like io_context::run(), but polls instead of
// sleeping while its BusyPoll says so.
void run_loop(asio::io_context& loop);

}  // namespace ibat::server
