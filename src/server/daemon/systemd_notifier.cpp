// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SystemdNotifier: datagrams to $NOTIFY_SOCKET (see systemd_notifier.h).
#include "server/daemon/systemd_notifier.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <spdlog/spdlog.h>

namespace ibat::server {
namespace {

// A decimal number filling all of `text`; none otherwise.
std::optional<std::uint64_t> parse_whole(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

SystemdNotifier SystemdNotifier::from_environment() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  std::optional<std::chrono::microseconds> watchdog;
  if (usec != nullptr) {
    std::optional<std::uint64_t> value = parse_whole(usec);
    std::optional<std::uint64_t> owner = pid != nullptr ? parse_whole(pid) : std::nullopt;
    if (!value || *value == 0) {
      spdlog::warn("WATCHDOG_USEC=\"{}\" is not a positive number of microseconds: no watchdog pings", usec);
    } else if (pid != nullptr && owner != static_cast<std::uint64_t>(::getpid())) {
      spdlog::debug("WATCHDOG_PID={} is not ours: no watchdog pings", pid);
    } else {
      watchdog = std::chrono::microseconds(*value);
    }
  }
  return SystemdNotifier(socket != nullptr ? socket : "", watchdog);
}

SystemdNotifier::SystemdNotifier(const std::string& socket, std::optional<std::chrono::microseconds> watchdog)
    : socket_(socket), watchdog_(watchdog) {
  if (socket.empty()) return;
  // A path, or '@' for the abstract namespace (sun_path then starts with NUL and is not terminated).
  const bool abstract = socket.front() == '@';
  if ((!abstract && socket.front() != '/') || socket.size() > sizeof address_.sun_path - (abstract ? 0 : 1)) {
    spdlog::warn("NOTIFY_SOCKET=\"{}\" is neither an absolute path nor an '@' name of at most {} bytes: "
                 "systemd will not hear that ibatd is ready",
                 socket, sizeof address_.sun_path - 1);
    return;
  }
  address_.sun_family = AF_UNIX;
  std::memcpy(address_.sun_path, socket.data(), socket.size());
  if (abstract) address_.sun_path[0] = '\0';
  address_size_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket.size() + (abstract ? 0 : 1));
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) spdlog::warn("cannot open a socket to notify systemd: {}", std::strerror(errno));
}

SystemdNotifier::~SystemdNotifier() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::chrono::microseconds> SystemdNotifier::watchdog_interval() const {
  if (!enabled() || !watchdog_) return std::nullopt;
  return *watchdog_ / 2;
}

void SystemdNotifier::ready(const std::string& status) {
  last_status_ = status;
  send("READY=1\nSTATUS=" + status);
}

void SystemdNotifier::reloading() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long usec = static_cast<long long>(now.tv_sec) * 1'000'000 + now.tv_nsec / 1'000;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::stopping() { send("STOPPING=1"); }

void SystemdNotifier::status(const std::string& status) {
  if (status == last_status_) return;
  last_status_ = status;
  send("STATUS=" + status);
}

void SystemdNotifier::watchdog() { send("WATCHDOG=1"); }

void SystemdNotifier::send(std::string_view message) {
  if (fd_ < 0) return;
  // Never block the event loop: a full socket drops this message.
  ssize_t n = ::sendto(fd_, message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                       reinterpret_cast<const sockaddr*>(&address_), address_size_);
  if (n >= 0) {
    send_failed_ = false;
    return;
  }
  if (send_failed_) return;
  send_failed_ = true;
  spdlog::warn("cannot notify systemd through NOTIFY_SOCKET={}: {} (first line of the message: {})", socket_,
               std::strerror(errno), message.substr(0, message.find('\n')));
}

}  // namespace ibat::server
