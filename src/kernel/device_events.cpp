// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's uevents of HCAs and their umad devices (device_events.h).
#include "kernel/device_events.h"

#include <cerrno>
#include <cstring>
#include <string_view>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace ibat::kernel {

bool UEvent::changes_ports() const {
  return (action == "add" || action == "remove") && (subsystem == "infiniband" || subsystem == "infiniband_mad");
}

std::optional<UEvent> parse_uevent(std::span<const std::uint8_t> datagram) {
  const std::string_view text(reinterpret_cast<const char*>(datagram.data()), datagram.size());
  const std::size_t header_end = text.find('\0');
  const std::string_view header = text.substr(0, header_end);
  const std::size_t at = header.find('@');
  if (header_end == std::string_view::npos || at == std::string_view::npos || at == 0 || at + 1 == header.size())
    return std::nullopt;
  UEvent event;
  event.devpath = std::string(header.substr(at + 1));
  bool action = false;
  bool subsystem = false;
  for (std::size_t start = header_end + 1; start < text.size();) {
    std::size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view field = text.substr(start, end - start);
    start = end + 1;
    if (field.starts_with("ACTION=")) {
      event.action = std::string(field.substr(7));
      action = true;
    } else if (field.starts_with("SUBSYSTEM=")) {
      event.subsystem = std::string(field.substr(10));
      subsystem = true;
    } else if (field.starts_with("DEVPATH=")) {
      event.devpath = std::string(field.substr(8));
    }
  }
  if (!action || !subsystem || event.action != header.substr(0, at)) return std::nullopt;
  return event;
}

DeviceEvents::DeviceEvents(asio::io_context& loop, std::function<void(const UEvent&)> changed)
    : changed_(std::move(changed)), socket_(loop) {}

DeviceEvents::~DeviceEvents() {
  *alive_ = false;
  stop();
}

bool DeviceEvents::start() {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = 1;  // the kernel's own events
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    spdlog::warn("HCAs added or removed while ibatd runs are not seen (kernel uevent socket: {}): restart "
                 "ibatd after a driver reload", std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return false;
  }
  socket_.assign(fd);
  counters_.running = true;
  wait_readable();
  return true;
}

void DeviceEvents::stop() {
  asio::error_code ec;
  if (socket_.is_open()) socket_.close(ec);
  counters_.running = false;
}

void DeviceEvents::wait_readable() {
  socket_.async_wait(asio::posix::stream_descriptor::wait_read, [this, alive = alive_](asio::error_code ec) {
    if (ec || !*alive) return;
    drain();
    if (*alive && socket_.is_open()) wait_readable();
  });
}

void DeviceEvents::drain() {
  for (;;) {
    const ssize_t n = ::recv(socket_.native_handle(), buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n < 0) {
      // ENOBUFS: events were lost; a re-read of the ports makes up for any of them.
      if (errno == ENOBUFS) changed_(UEvent{"overrun", "", ""});
      if (errno == EINTR || errno == ENOBUFS) continue;
      return;  // EAGAIN: drained
    }
    std::optional<UEvent> event = parse_uevent(std::span(buffer_.data(), static_cast<std::size_t>(n)));
    if (!event) {
      ++counters_.malformed;
    } else if (event->changes_ports()) {
      ++counters_.events;
      changed_(*event);
    } else {
      ++counters_.ignored;
    }
  }
}

}  // namespace ibat::kernel
