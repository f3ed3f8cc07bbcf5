// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// DeviceEvents: tells ibatd when an HCA or its umad device comes or goes while it runs (a driver
// reload, hot-plug, SR-IOV VFs made or destroyed), from the kernel's own uevents: a
// NETLINK_KOBJECT_UEVENT socket bound to group 1 (the kernel's broadcast, not udev's re-broadcast,
// so no udev is needed). An "add" or "remove" of SUBSYSTEM infiniband (the CA) or infiniband_mad
// (its umad/issm devices) calls `changed`; the caller re-reads the ports (a burst of events is one
// re-read: the caller waits for the burst to end). parse_uevent is the decoder, pure and fuzzed.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

namespace ibat::kernel {

struct UEvent {
  std::string action;     // "add", "remove", "change", ...
  std::string devpath;    // "/devices/pci0000:00/.../infiniband_mad/umad1"
  std::string subsystem;  // "infiniband_mad"
  // An add or remove of an HCA or of its umad devices: the ports may have changed.
  bool changes_ports() const;
};

// One uevent datagram as the kernel sends it: "ACTION@DEVPATH\0KEY=VALUE\0...". Nothing when it is
// not one (udev's "libudev" messages, garbage, a header without '@', ACTION/SUBSYSTEM missing).
std::optional<UEvent> parse_uevent(std::span<const std::uint8_t> datagram);

struct DeviceEventStats {
  bool running = false;
  std::uint64_t events = 0;    // uevents that changed ports (add/remove of infiniband, infiniband_mad)
  std::uint64_t ignored = 0;   // other uevents (other subsystems, other actions)
  std::uint64_t malformed = 0;
};

class DeviceEvents {
 public:
  DeviceEvents(asio::io_context& loop, std::function<void(const UEvent&)> changed);
  ~DeviceEvents();
  DeviceEvents(const DeviceEvents&) = delete;
  DeviceEvents& operator=(const DeviceEvents&) = delete;

  // Opens and binds the socket; false (logged: ports are then read at start only) when it cannot.
  bool start();
  void stop();
  DeviceEventStats stats() const { return counters_; }

 private:
  void wait_readable();
  void drain();

  std::function<void(const UEvent&)> changed_;
  asio::posix::stream_descriptor socket_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::array<std::uint8_t, 8192> buffer_{};
  DeviceEventStats counters_;
};

}  // namespace ibat::kernel
