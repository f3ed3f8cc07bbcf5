// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The HCA ports ibatd serves on this host, and keeping them so while it runs: the choice at start
// (--ca/--port, [fabric] ports, else every InfiniBand port), the FabricPort each one gets, and
// HostPortWatch, which re-reads the ports when the kernel says a CA or umad device came or went
// (kernel/device_events.h) and hands the Service the ports now present.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "kernel/device_events.h"
#include "server/daemon/config.h"
#include "server/daemon/service.h"

namespace ibat::server {

// At start: throws std::runtime_error saying what is wrong (no such port, an Ethernet port listed).
std::vector<Service::PortSpec> choose_ports(const DaemonConfig& config);
// While running: the chosen ports that are present now (with --ca/--port: the one chosen at
// start, if its CA is there). Never throws: a host without readable CAs has none.
std::vector<Service::PortSpec> present_ports(const DaemonConfig& config, const std::vector<Service::PortSpec>& at_start);

// The Service's factory of FabricPorts (options from [fabric], the port from the spec).
Service::FabricFactory fabric_port_factory(asio::io_context& loop, const DaemonConfig& config);

class HostPortWatch {
 public:
  HostPortWatch(asio::io_context& loop, const DaemonConfig& config, std::vector<Service::PortSpec> at_start,
                Service& service);
  void start();  // false from DeviceEvents is logged there: the ports stay as at start
  void stop();

 private:
  void on_event(const kernel::UEvent& event);
  void rescan();

  const DaemonConfig& config_;
  std::vector<Service::PortSpec> at_start_;
  Service& service_;
  kernel::DeviceEvents events_;
  asio::steady_timer settle_;  // a burst of uevents (a driver reload makes dozens) is one re-read
  bool armed_ = false;
};

}  // namespace ibat::server
