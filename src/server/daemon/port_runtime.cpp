// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortRuntime (see port_runtime.h): one port's fabric events, passed to its Resolver and told to the operator.
#include "server/daemon/port_runtime.h"

#include <spdlog/spdlog.h>

#include "server/daemon/json_views.h"

namespace ibat::server {

PortRuntime::PortRuntime(asio::io_context& loop, const core::Policy& policy, const core::Clock& clock,
                         const SinkFactory& make_sink, std::string device, int number, PortHooks hooks)
    : device_(std::move(device)),
      number_(number),
      hooks_(std::move(hooks)),
      sink_(make_sink(events())),
      resolver_(policy, clock, sink_),
      gate_(loop, resolver_) {}

core::LocalPort PortRuntime::local_port() const {
  if (last_port_) return *last_port_;
  return port_info_ ? port_info_() : core::LocalPort{};
}

nlohmann::json PortRuntime::event(std::string_view type, nlohmann::json fields) const {
  if (!device_.empty()) {
    fields["device"] = device_;
    fields["port"] = number_;
  }
  return event_json(type, std::move(fields));
}

void PortRuntime::on_query_result(core::QueryId id, const core::QueryResult& result) {
  if (auto line = sa_health_.on_result(result.error, std::chrono::system_clock::now()))
    line->warn ? spdlog::warn("{} ({})", line->text, name()) : spdlog::info("{} ({})", line->text, name());
  gate_.apply([&](core::Resolver& r) { r.on_query_result(id, result); });  // the table hears from the Resolver
}

void PortRuntime::on_table_result(core::QueryId id, const core::TableResult& result) {
  const core::Stats before = resolver_.stats();
  gate_.apply([&](core::Resolver& r) { r.on_table_result(id, result); });
  const core::Stats after = resolver_.stats();
  if (after.sa_tables_answered > before.sa_tables_answered) {
    spdlog::info("subnet paths: {} from one GetTable ({} left out), {} cached ({})",
                 after.table_paths - before.table_paths, after.table_skipped - before.table_skipped, after.entries,
                 name());
  } else if (after.sa_tables_failed > before.sa_tables_failed) {
    spdlog::warn("subnet GetTable failed ({}: {}): paths are asked one GET at a time ({})",
                 core::to_string(result.error), result.reason, name());
  }
}

void PortRuntime::on_subnet_size(core::QueryId id, const core::SubnetSizeResult& result) {
  gate_.apply([&](core::Resolver& r) { r.on_subnet_size(id, result); });
  if (result.error == core::Error::ok) {
    spdlog::info("subnet size: LIDs up to {} (the switches' LinearFDBTop): the subnet GetTable waits its turn "
                 "in the subnet's spread ({})", result.lids, name());
  } else {
    spdlog::warn("subnet size unknown ({}: {}): asked again if the SA was silent, else the subnet GetTable "
                 "goes at once ({})", core::to_string(result.error), result.reason, name());
  }
}

void PortRuntime::on_local_port(const core::LocalPort& port) {
  const bool lid_changed = last_port_ && last_port_->lid != port.lid;
  const bool changed = !last_port_ || lid_changed || last_port_->active != port.active ||
                       last_port_->link_down != port.link_down || last_port_->sm_lid != port.sm_lid ||
                       last_port_->gid != port.gid;
  gate_.apply([&](core::Resolver& r) { r.on_local_port(port); });
  if (changed) {
    spdlog::info("local port {} lid {} sm_lid {} {} ({})", port.gid.to_string(), port.lid.value, port.sm_lid.value,
                 port.active ? "active" : port.link_down ? "link down" : "down", name());
    hooks_.publish(event("port", {{"gid", port.gid.to_string()},
                                  {"lid", port.lid.value},
                                  {"sm_lid", port.sm_lid.value},
                                  {"active", port.active}}));
  }
  if (lid_changed)
    hooks_.publish(event("lid_change", {{"old_lid", last_port_->lid.value}, {"lid", port.lid.value}}));
  last_port_ = port;
  if (changed) hooks_.republish();
}

void PortRuntime::on_sm_changed() {
  spdlog::info("SM changed: every path is stale and will be revalidated ({})", name());
  gate_.apply([](core::Resolver& r) { r.on_sm_changed(); });
  hooks_.republish();
  // The port monitor reports the port (with the new SM LID) before the SM change it implies.
  nlohmann::json fields = nlohmann::json::object();
  if (last_port_) fields["sm_lid"] = last_port_->sm_lid.value;
  hooks_.publish(event("sm_change", std::move(fields)));
}

void PortRuntime::on_gid_out_of_service(const core::Gid& gid) {
  gate_.apply([&](core::Resolver& r) { r.on_gid_out_of_service(gid); });
  hooks_.republish();
  hooks_.publish(event("gid_out", {{"gid", gid.to_string()}}));
}

void PortRuntime::on_gid_in_service(const core::Gid& gid) {
  gate_.apply([&](core::Resolver& r) { r.on_gid_in_service(gid); });
  hooks_.publish(event("gid_in", {{"gid", gid.to_string()}}));
}

void PortRuntime::on_broadcast_params(const core::BroadcastParams& params) {
  gate_.apply([&](core::Resolver& r) { r.on_broadcast_params(params); });
}

fabric::FabricEvents PortRuntime::events() {
  fabric::FabricEvents e;
  e.input = this;
  e.on_table_fallback = [this](const std::string& reason) {
    spdlog::warn("PathRecord GetTables off until the next SM: {}; paths are asked one GET at a time ({})", reason,
                 name());
  };
  e.on_port_event = [this](fabric::PortEvent event) { spdlog::info("HCA event {} ({})", fabric::to_string(event), name()); };
  return e;
}

}  // namespace ibat::server
