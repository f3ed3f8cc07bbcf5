// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// systemd's service notification protocol (sd_notify(3)) without libsystemd: each message is one
// datagram of "KEY=VALUE" lines sent to the AF_UNIX socket $NOTIFY_SOCKET names (a path, or, with
// a leading '@', a name in the abstract namespace). systemd sets $NOTIFY_SOCKET for Type=notify
// units, and $WATCHDOG_USEC (with $WATCHDOG_PID) when WatchdogSec= is set. Without $NOTIFY_SOCKET
// every call does nothing: ibatd run by hand or by a non-notify unit.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ibat::server {

class SystemdNotifier {
 public:
  // From $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID (the watchdog is ours only when
  // $WATCHDOG_PID is unset or our pid, as sd_watchdog_enabled(3) says). A malformed value is
  // logged and ignored.
  static SystemdNotifier from_environment();
  // `socket`: as $NOTIFY_SOCKET ("" or an unusable name: disabled, the latter logged);
  // `watchdog`: as $WATCHDOG_USEC (none: no watchdog).
  explicit SystemdNotifier(const std::string& socket, std::optional<std::chrono::microseconds> watchdog = {});
  ~SystemdNotifier();
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  bool enabled() const { return fd_ >= 0; }
  // How often watchdog() must be called: half of $WATCHDOG_USEC (sd_watchdog_enabled(3)'s advice);
  // none when systemd watches nothing or notification is disabled.
  std::optional<std::chrono::microseconds> watchdog_interval() const;

  // "READY=1" with the status line: start-up (or a reload) is complete.
  void ready(const std::string& status);
  // "RELOADING=1" and MONOTONIC_USEC: a reload began; ready() ends it.
  void reloading();
  // "STOPPING=1": shutdown began.
  void stopping();
  // "STATUS=..." (what `systemctl status` shows), sent only when it differs from the last one sent.
  void status(const std::string& status);
  // "WATCHDOG=1": the event loop is alive.
  void watchdog();

 private:
  void send(std::string_view message);

  int fd_ = -1;
  sockaddr_un address_{};
  socklen_t address_size_ = 0;
  std::string socket_;  // as given, for messages
  std::optional<std::chrono::microseconds> watchdog_;
  std::string last_status_;
  bool send_failed_ = false;  // a failed send is logged once
};

}  // namespace ibat::server
