// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortRuntime: everything ibatd keeps for one HCA port: its Resolver (cache, SaPacer, SA budget:
// ports may sit on different subnets with different SMs), the ResolverGate every input to it
// passes, the port's fabric (a FabricPort in the daemon, a fake SA in tests) and what the port's
// events mean to an operator (log lines, WATCH events). It is the port's one input interface
// (core::FabricInput): its fabric's events arrive here, once, through the FabricEvents it hands
// out, and reach the Resolver through the gate; the Service hears of those that touch the shared
// table.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "core/resolver.h"
#include "fabric/fabric_port.h"
#include "fabric/port_enumeration.h"
#include "server/daemon/resolver_gate.h"
#include "server/daemon/sa_health.h"

namespace ibat::server {

// What a port's events ask of the Service.
struct PortHooks {
  std::function<void(nlohmann::json event)> publish;  // a WATCH event (json_views event_json)
  std::function<void()> republish;                     // many entries may have changed: rebuild the table
};

class PortRuntime final : public core::FabricInput {
 public:
  // `make_sink` gets this port's FabricEvents and returns its QuerySink, which outlives the port.
  using SinkFactory = std::function<core::QuerySink&(fabric::FabricEvents)>;
  PortRuntime(asio::io_context& loop, const core::Policy& policy, const core::Clock& clock, const SinkFactory& make_sink,
              std::string device, int number, PortHooks hooks);
  PortRuntime(const PortRuntime&) = delete;
  PortRuntime& operator=(const PortRuntime&) = delete;

  const std::string& device() const { return device_; }
  int number() const { return number_; }
  std::string name() const { return device_.empty() ? std::string("port") : fabric::port_name(device_, number_); }
  core::Resolver& resolver() { return resolver_; }
  const core::Resolver& resolver() const { return resolver_; }
  ResolverGate& gate() { return gate_; }
  // The last port report, else what `set_port_info` says (the port as opened), else nothing known.
  core::LocalPort local_port() const;
  void set_port_info(std::function<core::LocalPort()> source) { port_info_ = std::move(source); }
  // Since when this port's SA has not answered a query (unset: answering, or nothing asked).
  std::optional<std::chrono::system_clock::time_point> sa_silent_since() const { return sa_health_.silent_since(); }

  // The fabric's inputs, on the loop thread.
  void on_query_result(core::QueryId id, const core::QueryResult& result) override;
  void on_table_result(core::QueryId id, const core::TableResult& result) override;
  void on_subnet_size(core::QueryId id, const core::SubnetSizeResult& result) override;
  void on_local_port(const core::LocalPort& port) override;
  void on_sm_changed() override;
  void on_gid_out_of_service(const core::Gid& gid) override;
  void on_gid_in_service(const core::Gid& gid) override;
  void on_broadcast_params(const core::BroadcastParams& params) override;

 private:
  fabric::FabricEvents events();
  nlohmann::json event(std::string_view type, nlohmann::json fields) const;

  std::string device_;
  int number_;
  PortHooks hooks_;
  core::QuerySink& sink_;
  core::Resolver resolver_;
  ResolverGate gate_;
  std::optional<core::LocalPort> last_port_;
  std::function<core::LocalPort()> port_info_;
  SaHealth sa_health_;
};

}  // namespace ibat::server
