// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortRouter (see port_router.h): which port's Resolver a request, cancel, neighbour or flush reaches.
#include "server/daemon/port_router.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <unordered_map>
#include <variant>

#include "core/neighbour_table.h"

namespace ibat::server {

namespace {
constexpr int kIdShift = 56;       // request ids: port index in the top byte
// PATHS cursors of a multi-port host: the port's index in the top bits, as few as the ports need
// (2 for four ports), the port's own cursor (a cache slot, below capacity) in the rest.
int cursor_shift(std::size_t ports) { return 32 - static_cast<int>(std::bit_width(ports - 1)); }
}  // namespace

PortRouter::PortRouter(ResolverGate& only) { add(RoutedPort{&only, "", 0, {}}); }

void PortRouter::add(RoutedPort port) {
  if (ports_.size() >= 255) throw std::length_error("ibatd serves at most 255 ports");
  unsigned space = 0;
  while (std::any_of(ports_.begin(), ports_.end(), [&](const RoutedPort& p) { return p.id_space == space; })) ++space;
  port.id_space = space;
  port.gate->use_request_ids_from((static_cast<core::RequestId>(space) << kIdShift) + 1);
  ports_.push_back(std::move(port));
}

void PortRouter::remove(std::size_t index) {
  if (index < ports_.size()) ports_.erase(ports_.begin() + static_cast<std::ptrdiff_t>(index));
}

std::optional<std::size_t> PortRouter::find(std::string_view name) const {
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].name() == name) return i;
  std::optional<std::size_t> only;  // a device name alone names its port if it has just one
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i].device != name) continue;
    if (only) return std::nullopt;
    only = i;
  }
  return only;
}

std::optional<std::size_t> PortRouter::find(std::string_view device, int number) const {
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].device == device && ports_[i].number == number) return i;
  return std::nullopt;
}

std::optional<std::size_t> PortRouter::find(const core::Gid& gid) const {
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].local_port && ports_[i].local_port().gid == gid) return i;
  return std::nullopt;
}

std::size_t PortRouter::default_port() const {
  if (!default_name_.empty())
    if (std::optional<std::size_t> named = find(default_name_)) return *named;
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].local_port && ports_[i].local_port().active) return i;
  return 0;
}

core::RequestId PortRouter::fail_now(core::Completion& done, core::Error error) {
  core::ResolveResult result;
  result.error = error;
  done(0, result);
  return 0;
}

std::optional<std::size_t> PortRouter::port_for(const core::ResolveRequest& request) const {
  if (request.sgid) return find(*request.sgid);
  if (const auto* ip = std::get_if<core::IpAddr>(&request.target)) {
    const std::size_t preferred = default_port();
    if (resolver(preferred).knows_neighbour(*ip)) return preferred;
    for (std::size_t i = 0; i < ports_.size(); ++i)
      if (resolver(i).knows_neighbour(*ip)) return i;
  }
  return default_port();
}

core::RequestId PortRouter::resolve(const core::ResolveRequest& request, core::Completion done) {
  if (ports_.empty()) return fail_now(done, core::Error::unreachable);
  if (ports_.size() == 1) return ports_[0].gate->resolve(request, std::move(done));
  std::optional<std::size_t> index = port_for(request);
  if (!index) return fail_now(done, core::Error::invalid);
  return ports_[*index].gate->resolve(request, std::move(done));
}

core::RequestId PortRouter::resolve_on(std::string_view device, int number, const core::ResolveRequest& request,
                                       core::Completion done) {
  // A host of one IB port: the kernel asks only for it (the kernel asks the local SA for IB ports only).
  std::optional<std::size_t> index = ports_.size() == 1 ? std::optional<std::size_t>(0) : find(device, number);
  if (!index) return fail_now(done, core::Error::unreachable);
  return ports_[*index].gate->resolve(request, std::move(done));
}

bool PortRouter::cancel(core::RequestId id) {
  const auto space = static_cast<unsigned>(id >> kIdShift);
  if (id == 0) return false;
  for (RoutedPort& p : ports_)
    if (p.id_space == space) return p.gate->cancel(id);
  return false;
}

void PortRouter::on_neighbour(const core::IpAddr& ip, const core::HwAddr& hw, std::optional<core::Lid> source_lid) {
  for (RoutedPort& p : ports_) p.gate->on_neighbour(ip, hw, source_lid);
}

bool PortRouter::on_neighbour_removed(const core::IpAddr& ip) {
  bool any = false;
  for (RoutedPort& p : ports_) any = p.gate->on_neighbour_removed(ip) || any;
  return any;
}

std::vector<std::size_t> PortRouter::kernel_ports(const std::optional<kernel::IpoibPort>& port) const {
  std::vector<std::size_t> out;
  if (ports_.size() == 1 && ports_[0].device.empty()) return {0};  // one unnamed port: everything is its
  if (port) {
    if (std::optional<std::size_t> index = find(port->device, port->number)) out.push_back(*index);
    return out;
  }
  for (std::size_t i = 0; i < ports_.size(); ++i) out.push_back(i);
  return out;
}

void PortRouter::on_kernel_neighbour(const core::IpAddr& ip, const core::HwAddr& hw,
                                     const std::optional<kernel::IpoibPort>& port) {
  for (std::size_t i : kernel_ports(port)) ports_[i].gate->on_neighbour(ip, hw);
}

void PortRouter::on_kernel_neighbour_removed(const core::IpAddr& ip, const std::optional<kernel::IpoibPort>& port) {
  for (std::size_t i : kernel_ports(port)) ports_[i].gate->on_neighbour_removed(ip);
}

std::vector<core::Resolver::NeighbourView> PortRouter::neighbours() const {
  if (ports_.size() == 1) return resolver(0).neighbours();
  std::vector<core::Resolver::NeighbourView> all;
  std::unordered_map<core::IpAddr, std::vector<core::HwAddr>> listed;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    for (core::Resolver::NeighbourView& n : resolver(i).neighbours()) {
      std::vector<core::HwAddr>& hws = listed[n.ip];
      if (std::find(hws.begin(), hws.end(), n.hw) != hws.end()) continue;
      hws.push_back(n.hw);
      all.push_back(std::move(n));
    }
  }
  return all;
}

std::size_t PortRouter::flush_all(std::optional<std::size_t> only) {
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (!only || *only == i) dropped += ports_[i].gate->flush_all();
  return dropped;
}

std::size_t PortRouter::flush(const core::Gid& dgid, std::optional<core::Pkey> pkey, std::optional<std::size_t> only) {
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (!only || *only == i) dropped += ports_[i].gate->flush(dgid, pkey);
  return dropped;
}

core::Resolver::EntryPage PortRouter::entries_page(std::uint32_t cursor, std::size_t limit) const {
  if (ports_.empty()) return {};
  if (ports_.size() == 1) return resolver(0).entries_page(cursor, limit);
  core::Resolver::EntryPage page;
  const int shift = cursor_shift(ports_.size());
  const std::uint32_t mask = static_cast<std::uint32_t>((std::uint64_t{1} << shift) - 1);
  std::size_t index = cursor >> shift;
  std::uint32_t local = cursor & mask;
  for (; index < ports_.size() && page.entries.size() < limit; ++index, local = 0) {
    core::Resolver::EntryPage part = resolver(index).entries_page(local, limit - page.entries.size());
    page.entries.insert(page.entries.end(), part.entries.begin(), part.entries.end());
    if (part.next) {
      page.next = static_cast<std::uint32_t>(index << shift) | (*part.next & mask);
      return page;
    }
  }
  if (index < ports_.size()) page.next = static_cast<std::uint32_t>(index << shift);
  return page;
}

bool PortRouter::serving(std::size_t index) const {
  return !ports_[index].local_port || !ports_[index].local_port().link_down;
}

std::vector<core::CacheEntryView> PortRouter::entries() const {
  std::vector<core::CacheEntryView> all;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    std::vector<core::CacheEntryView> part = resolver(i).entries();
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

void PortRouter::for_each_entry_page(bool serving_only, std::size_t limit,
                                     const std::function<void(const std::vector<core::CacheEntryView>&)>& page) const {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (serving_only && !serving(i)) continue;
    for (std::optional<std::uint32_t> cursor = 0; cursor;) {
      const core::Resolver::EntryPage part = resolver(i).entries_page(*cursor, limit);
      page(part.entries);
      cursor = part.next;
    }
  }
}

}  // namespace ibat::server
