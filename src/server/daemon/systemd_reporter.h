// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Keeps systemd informed from ibatd's event loop through a SystemdNotifier: WATCHDOG=1 every half
// $WATCHDOG_USEC, sent by a timer on the loop itself, so a wedged loop stops the pings and systemd
// (WatchdogSec=) restarts ibatd; and STATUS= whenever the status line (ports active, paths cached)
// has changed, looked at every kStatusCheck. With notification disabled it arms nothing.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "server/daemon/systemd_notifier.h"

namespace ibat::server {

class SystemdReporter {
 public:
  // `systemctl status` is read by a person: a status at most this old is fresh enough, and a
  // cache filling under load does not send a datagram per path.
  static constexpr std::chrono::milliseconds kStatusCheck{2000};

  // `status` gives the current status line (Service::status_line()); called on the loop.
  SystemdReporter(asio::io_context& loop, SystemdNotifier& notifier, std::function<std::string()> status,
                  std::chrono::milliseconds status_check = kStatusCheck);
  // Arms the timers; ready() should have been sent.
  void start();
  // Cancels them (shutdown).
  void stop();

 private:
  void arm_watchdog(std::chrono::microseconds interval);
  void arm_status();

  SystemdNotifier& notifier_;
  std::function<std::string()> status_;
  std::chrono::milliseconds status_check_;
  asio::steady_timer watchdog_timer_;
  asio::steady_timer status_timer_;
};

}  // namespace ibat::server
