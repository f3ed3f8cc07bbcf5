// The Resolver's input gate: forwards each input, then re-arms the tick timer (resolver_gate.h).
#include "server/daemon/resolver_gate.h"

#include <chrono>
#include <utility>

namespace ibat::server {

using std::chrono::steady_clock;

ResolverGate::ResolverGate(asio::io_context& loop, core::Resolver& resolver)
    : resolver_(resolver), timer_(loop) {}

core::RequestId ResolverGate::resolve(const core::ResolveRequest& request, core::Completion done) {
  core::RequestId id = resolver_.resolve(request, std::move(done));
  arm();
  return id;
}

bool ResolverGate::cancel(core::RequestId id) {
  bool cancelled = resolver_.cancel(id);
  arm();
  return cancelled;
}

void ResolverGate::on_query_result(core::QueryId id, const core::QueryResult& result) {
  resolver_.on_query_result(id, result);
  arm();
}

void ResolverGate::on_table_result(core::QueryId id, const core::TableResult& result) {
  resolver_.on_table_result(id, result);
  arm();
}

void ResolverGate::on_local_port(const core::LocalPort& port) {
  resolver_.on_local_port(port);
  arm();
}

void ResolverGate::on_sm_changed() {
  resolver_.on_sm_changed();
  arm();
}

void ResolverGate::on_gid_out_of_service(const core::Gid& gid) {
  resolver_.on_gid_out_of_service(gid);
  arm();
}

void ResolverGate::on_gid_in_service(const core::Gid& gid) {
  resolver_.on_gid_in_service(gid);
  arm();
}

void ResolverGate::on_broadcast_params(const core::BroadcastParams& params) {
  resolver_.on_broadcast_params(params);
  arm();
}

void ResolverGate::on_neighbour(const core::IpAddr& ip, const core::HwAddr& hw,
                                std::optional<core::Lid> source_lid) {
  resolver_.on_neighbour(ip, hw, source_lid);
  arm();
}

bool ResolverGate::on_neighbour_removed(const core::IpAddr& ip) {
  bool removed = resolver_.on_neighbour_removed(ip);
  arm();
  return removed;
}

std::size_t ResolverGate::flush_all() {
  std::size_t dropped = resolver_.flush_all();
  arm();
  return dropped;
}

std::size_t ResolverGate::flush(const core::Gid& dgid, std::optional<core::Pkey> pkey) {
  std::size_t dropped = resolver_.flush(dgid, pkey);
  arm();
  return dropped;
}

void ResolverGate::load_stale(const std::vector<core::CacheEntryView>& entries) {
  resolver_.load_stale(entries);
  arm();
}

void ResolverGate::set_policy(const core::Policy& policy) {
  resolver_.set_policy(policy);
  armed_for_.reset();
  arm();
}

void ResolverGate::arm() {
  if (stopped_) return;
  std::optional<core::TimePoint> next = resolver_.next_wakeup();
  if (!next) return;
  if (armed_for_ && *armed_for_ <= *next) return;  // the armed tick comes first anyway
  armed_for_ = *next;
  timer_.expires_at(std::chrono::time_point_cast<steady_clock::duration>(
      steady_clock::time_point(next->time_since_epoch())));
  timer_.async_wait([this, alive = alive_](asio::error_code ec) {
    if (ec || !*alive) return;  // re-armed, stopped, or the gate is gone
    armed_for_.reset();
    on_tick();
  });
}

void ResolverGate::stop() {
  stopped_ = true;
  timer_.cancel();
}

void ResolverGate::on_tick() {
  resolver_.tick();
  arm();
}

}  // namespace ibat::server
