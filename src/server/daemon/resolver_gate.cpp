// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Resolver's input gate: runs each input, then re-arms the tick timer (resolver_gate.h).
#include "server/daemon/resolver_gate.h"

#include <chrono>
#include <utility>

namespace ibat::server {

using std::chrono::steady_clock;

ResolverGate::ResolverGate(asio::io_context& loop, core::Resolver& resolver)
    : resolver_(resolver), timer_(loop) {}

core::RequestId ResolverGate::resolve(const core::ResolveRequest& request, core::Completion done) {
  return apply([&](core::Resolver& r) { return r.resolve(request, std::move(done)); });
}

bool ResolverGate::cancel(core::RequestId id) {
  return apply([&](core::Resolver& r) { return r.cancel(id); });
}

void ResolverGate::on_neighbour(const core::IpAddr& ip, const core::HwAddr& hw,
                                std::optional<core::Lid> source_lid) {
  apply([&](core::Resolver& r) { r.on_neighbour(ip, hw, source_lid); });
}

bool ResolverGate::on_neighbour_removed(const core::IpAddr& ip) {
  return apply([&](core::Resolver& r) { return r.on_neighbour_removed(ip); });
}

std::size_t ResolverGate::flush_all() {
  return apply([](core::Resolver& r) { return r.flush_all(); });
}

std::size_t ResolverGate::flush(const core::Gid& dgid, std::optional<core::Pkey> pkey) {
  return apply([&](core::Resolver& r) { return r.flush(dgid, pkey); });
}

void ResolverGate::load_stale(const std::vector<core::CacheEntryView>& entries) {
  apply([&](core::Resolver& r) { r.load_stale(entries); });
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
