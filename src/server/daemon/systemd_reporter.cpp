// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SystemdReporter: the watchdog and status timers (see systemd_reporter.h).
#include "server/daemon/systemd_reporter.h"

namespace ibat::server {

SystemdReporter::SystemdReporter(asio::io_context& loop, SystemdNotifier& notifier,
                                 std::function<std::string()> status, std::chrono::milliseconds status_check)
    : notifier_(notifier),
      status_(std::move(status)),
      status_check_(status_check),
      watchdog_timer_(loop),
      status_timer_(loop) {}

void SystemdReporter::start() {
  if (!notifier_.enabled()) return;
  if (auto interval = notifier_.watchdog_interval()) {
    notifier_.watchdog();
    arm_watchdog(*interval);
  }
  arm_status();
}

void SystemdReporter::stop() {
  watchdog_timer_.cancel();
  status_timer_.cancel();
}

void SystemdReporter::arm_watchdog(std::chrono::microseconds interval) {
  watchdog_timer_.expires_after(interval);
  watchdog_timer_.async_wait([this, interval](asio::error_code ec) {
    if (ec) return;
    notifier_.watchdog();
    arm_watchdog(interval);
  });
}

void SystemdReporter::arm_status() {
  status_timer_.expires_after(status_check_);
  status_timer_.async_wait([this](asio::error_code ec) {
    if (ec) return;
    notifier_.status(status_());
    arm_status();
  });
}

}  // namespace ibat::server
