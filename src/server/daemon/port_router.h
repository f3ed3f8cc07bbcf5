// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortRouter: the one front the request servers (native, ACM, the kernel's local SA, the kernel's
// neighbour table) talk to on a host with several HCA ports, each with its own Resolver behind its
// own ResolverGate. It picks the port a request belongs to (docs/linux.md, "Which port answers"):
// the one whose GID is the request's source GID, else the default port; the kernel's requests by
// device name and port number. Request ids carry their port (each Resolver's ids start at
// index << 56), so a cancel finds its port with no table. A kernel neighbour entry joins the port
// of its IPoIB interface (every port when that is not known), other neighbour input every port; a
// resolve by IP with no source GID goes to the first port that knows the address. A flush reaches
// every port or the one named.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resolver.h"
#include "fabric/port_enumeration.h"
#include "kernel/ipoib_port.h"
#include "server/daemon/resolver_gate.h"

namespace ibat::server {

// One port as the router sees it: its gate, its name ("mlx5_0:1") and what it knows of itself.
struct RoutedPort {
  ResolverGate* gate = nullptr;
  std::string device;  // "mlx5_0"
  int number = 0;      // 1
  std::function<core::LocalPort()> local_port;  // the last report, or the port as opened
  std::string name() const { return fabric::port_name(device, number); }
  unsigned id_space = 0;  // set by add(): the top byte of its request ids
};

class PortRouter {
 public:
  PortRouter() = default;
  explicit PortRouter(ResolverGate& only);  // one unnamed port: every request goes to it
  PortRouter(const PortRouter&) = delete;
  PortRouter& operator=(const PortRouter&) = delete;

  // Adds a port (at most 255 at once) at the end; its Resolver's request ids start at S << 56,
  // S the lowest id space no port in service holds.
  void add(RoutedPort port);
  // Drops port `index` (its CA went away): the ports after it move up one.
  void remove(std::size_t index);
  // "mlx5_1:1" (or "mlx5_1", its first port): the port requests without a source GID go to;
  // unset or unknown: the first active port, else the first.
  void set_default_port(std::string name) { default_name_ = std::move(name); }

  std::size_t size() const { return ports_.size(); }
  const RoutedPort& port(std::size_t index) const { return ports_[index]; }
  // The port `name` ("mlx5_0:1", or a device of one port: "mlx5_0") names, if any.
  std::optional<std::size_t> find(std::string_view name) const;
  std::optional<std::size_t> find(std::string_view device, int number) const;
  std::optional<std::size_t> find(const core::Gid& gid) const;
  std::size_t default_port() const;

  // By source GID (none: the default port). A GID no port has, on a host of several ports, is
  // `invalid` at once (id 0), as one port's Resolver answers a GID not its own.
  core::RequestId resolve(const core::ResolveRequest& request, core::Completion done);
  // The kernel's form: the port its header names; an unknown one fails `unreachable` at once (the
  // kernel: F_ERR). A host of one port answers for it whatever the name. With no port at all (the
  // host's only CA went away), every request fails `unreachable` at once.
  core::RequestId resolve_on(std::string_view device, int number, const core::ResolveRequest& request,
                             core::Completion done);
  bool cancel(core::RequestId id);

  void on_neighbour(const core::IpAddr& ip, const core::HwAddr& hw, std::optional<core::Lid> source_lid = std::nullopt);
  bool on_neighbour_removed(const core::IpAddr& ip);
  // The kernel's entries, of an interface on port `device`:`number` (nullopt: not known, every
  // port). An interface on a port ibatd does not serve is left alone.
  void on_kernel_neighbour(const core::IpAddr& ip, const core::HwAddr& hw,
                           const std::optional<kernel::IpoibPort>& port);
  void on_kernel_neighbour_removed(const core::IpAddr& ip, const std::optional<kernel::IpoibPort>& port);
  // Every port's entries (an address two ports hold alike, once).
  std::vector<core::Resolver::NeighbourView> neighbours() const;
  // Every port when `only` is unset.
  std::size_t flush_all(std::optional<std::size_t> only = std::nullopt);
  std::size_t flush(const core::Gid& dgid, std::optional<core::Pkey> pkey, std::optional<std::size_t> only = std::nullopt);
  // Pages through every port's entries in turn: the cursor's top bits are the port (as few as the
  // ports need, so a port's own cursor keeps 30 bits with four ports). A CA added or removed
  // between two pages may make a listing skip or repeat that port's entries.
  core::Resolver::EntryPage entries_page(std::uint32_t cursor, std::size_t limit) const;
  // Every port's entries.
  std::vector<core::CacheEntryView> entries() const;
  // The same entries handed to `page` at most `limit` at a time, port by port: a walk over them
  // holds one page, not every port's entries at once. The Resolvers must not change meanwhile.
  // `serving_only`: not those of a port whose cable is out (it serves none).
  void for_each_entry_page(bool serving_only, std::size_t limit,
                           const std::function<void(const std::vector<core::CacheEntryView>&)>& page) const;

  const core::Resolver& resolver(std::size_t index) const { return ports_[index].gate->resolver(); }

 private:
  static core::RequestId fail_now(core::Completion& done, core::Error error);
  // Whether port `index` serves: not while its cable is out.
  bool serving(std::size_t index) const;
  std::optional<std::size_t> port_for(const core::ResolveRequest& request) const;
  // The ports a kernel neighbour entry belongs to: the one named, none if not served, all if unnamed.
  std::vector<std::size_t> kernel_ports(const std::optional<kernel::IpoibPort>& port) const;

  std::vector<RoutedPort> ports_;
  std::string default_name_;
};

}  // namespace ibat::server
