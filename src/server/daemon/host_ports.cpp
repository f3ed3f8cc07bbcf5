// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ports ibatd serves and their FabricPorts, at start and as CAs come and go (host_ports.h).
#include "server/daemon/host_ports.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "fabric/fabric_port.h"
#include "fabric/port_enumeration.h"

namespace ibat::server {

namespace {

constexpr std::chrono::milliseconds kSettle{250};

bool one_port_named(const DaemonConfig& config) { return !config.fabric.ca.empty() || config.fabric.port != 0; }

class FabricPortHolder final : public Service::PortFabric {
 public:
  FabricPortHolder(asio::io_context& loop, const fabric::FabricOptions& options, fabric::FabricEvents events)
      : port_(loop, options, std::move(events)) {
    spdlog::info("port {}:{}: port events: {}", options.ca, options.port, port_.port_events_status());
  }
  core::QuerySink& sink() override { return port_; }
  fabric::FabricStats stats() const override { return port_.stats(); }
  std::optional<core::LocalPort> opened_port() const override { return port_.local_port(); }
  void start() override { port_.start(); }
  void stop() override { port_.stop(); }

 private:
  fabric::FabricPort port_;
};

}  // namespace

std::vector<Service::PortSpec> choose_ports(const DaemonConfig& config) {
  std::string error;
  std::vector<Service::PortSpec> specs;
  if (one_port_named(config)) {
    std::optional<fabric::HcaPort> port = fabric::find_port(config.fabric.ca, config.fabric.port, error);
    if (!port) throw std::runtime_error(error);
    specs.push_back({port->ca, port->number});
    return specs;
  }
  std::vector<fabric::HcaPort> found = fabric::enumerate_ports(error);
  if (!error.empty()) throw std::runtime_error(error);
  fabric::PortPlan plan = fabric::plan_ports(found, config.fabric_ports.ports);
  for (const std::string& line : plan.skipped) spdlog::info("{}", line);
  if (!plan.error.empty()) throw std::runtime_error(plan.error);
  for (const fabric::HcaPort& p : plan.serve) specs.push_back({p.ca, p.number});
  return specs;
}

std::vector<Service::PortSpec> present_ports(const DaemonConfig& config, const std::vector<Service::PortSpec>& at_start) {
  std::string error;
  std::vector<fabric::HcaPort> found = fabric::enumerate_ports(error);  // none readable: none present
  std::vector<Service::PortSpec> specs;
  if (one_port_named(config)) {
    for (const Service::PortSpec& spec : at_start) {
      const bool there = std::any_of(found.begin(), found.end(), [&](const fabric::HcaPort& p) {
        return p.ca == spec.device && p.number == spec.number && p.infiniband();
      });
      if (there) specs.push_back(spec);
    }
    return specs;
  }
  for (const fabric::HcaPort& p : fabric::present_ports(found, config.fabric_ports.ports))
    specs.push_back({p.ca, p.number});
  return specs;
}

Service::FabricFactory fabric_port_factory(asio::io_context& loop, const DaemonConfig& config) {
  return [&loop, &config](const Service::PortSpec& spec, fabric::FabricEvents events) {
    fabric::FabricOptions options = config.fabric;
    options.ca = spec.device;
    options.port = spec.number;
    return std::make_unique<FabricPortHolder>(loop, options, std::move(events));
  };
}

HostPortWatch::HostPortWatch(asio::io_context& loop, const DaemonConfig& config, std::vector<Service::PortSpec> at_start,
                             Service& service)
    : config_(config),
      at_start_(std::move(at_start)),
      service_(service),
      events_(loop, [this](const kernel::UEvent& e) { on_event(e); }),
      settle_(loop) {}

void HostPortWatch::start() {
  if (events_.start()) spdlog::info("watching for HCAs added or removed (kernel uevents)");
}

void HostPortWatch::stop() {
  events_.stop();
  settle_.cancel();
}

void HostPortWatch::on_event(const kernel::UEvent& event) {
  spdlog::debug("uevent {} {} ({})", event.action, event.devpath, event.subsystem);
  if (armed_) return;
  armed_ = true;
  settle_.expires_after(kSettle);
  settle_.async_wait([this](asio::error_code ec) {
    armed_ = false;
    if (!ec) rescan();
  });
}

void HostPortWatch::rescan() { service_.set_ports(present_ports(config_, at_start_)); }

}  // namespace ibat::server
