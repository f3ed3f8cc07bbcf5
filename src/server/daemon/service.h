// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Service: everything ibatd runs on its event loop, minus the fabric. It owns one PortRuntime per
// HCA port (its Resolver, the ResolverGate every input passes, its fabric's events), the PortRouter
// the request servers reach them through, the native and ACM socket servers, the shared table (which
// observes every port's Resolver), the periodic warm-cache snapshot, config reloads and the orderly
// shutdown. It takes any core::QuerySink, so tests run it with a fake SA on one unnamed port and the
// daemon with a FabricPort per port (made by a factory the Service hands each port's events to).
// Ports come and go while it runs (set_ports: a CA was added or removed).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/resolver.h"
#include "fabric/fabric_port.h"
#include "kernel/local_sa_responder.h"
#include "kernel/neighbour_monitor.h"
#include "server/daemon/busy_poll.h"
#include "server/daemon/config.h"
#include "server/daemon/json_views.h"
#include "server/daemon/native_server.h"
#include "server/daemon/port_router.h"
#include "server/daemon/port_runtime.h"
#include "server/daemon/table_publisher.h"
#include "shm/table_file.h"

namespace ibat::server {

class AcmServer;

class Service {
 public:
  // `may_administer` decides who may run NEIGH_ADD/DEL and FLUSH; empty: root or admin_group.
  Service(asio::io_context& loop, const DaemonConfig& config, core::QuerySink& sink,
          std::function<bool(const PeerCredentials&)> may_administer = {});
  struct PortSpec {
    std::string device;  // "mlx5_0"
    int number = 1;
    std::string name() const { return fabric::port_name(device, number); }
    bool operator==(const PortSpec&) const = default;
  };
  // A port's fabric as the Service holds it (the daemon's: a FabricPort): the SA client the port's
  // Resolver sends to, and what it reports of itself. Started with the Service (or at once when
  // added later), stopped before it is dropped.
  class PortFabric {
   public:
    virtual ~PortFabric() = default;
    virtual core::QuerySink& sink() = 0;
    virtual fabric::FabricStats stats() const = 0;
    virtual std::optional<core::LocalPort> opened_port() const = 0;  // the port as opened, if known
    virtual void start() = 0;
    virtual void stop() = 0;
  };
  // Gets the port and the events its fabric reports; throws std::runtime_error if it cannot open it.
  using FabricFactory = std::function<std::unique_ptr<PortFabric>(const PortSpec&, fabric::FabricEvents)>;
  // The daemon's form: one port per PortSpec.
  Service(asio::io_context& loop, const DaemonConfig& config, const std::vector<PortSpec>& ports,
          FabricFactory make_fabric, std::function<bool(const PeerCredentials&)> may_administer = {});
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Loads the snapshot (a bad one is logged and ignored), binds the sockets (throws
  // std::runtime_error naming the path) and arms the timers.
  void start();

  // SIGTERM: answers every pending request `cancelled`, writes the snapshot, stops accepting,
  // lets each connection flush its replies, then calls `done` (at the latest after `grace`).
  void shutdown(std::function<void()> done, std::chrono::milliseconds grace = std::chrono::seconds(2));

  // SIGHUP: applies the reloadable settings of `config` and logs what changed.
  void reload(const DaemonConfig& config);

  // The host's ports now (a CA came or went): a port no longer listed is dropped (its waiting
  // requests fail `unreachable`, its paths leave the shared table), a new one is opened and served
  // (one that cannot be opened is logged and left out). Ports still listed are not touched.
  void set_ports(const std::vector<PortSpec>& ports);

  // Where STATS gets port `index`'s fabric counters from (default: its PortFabric's).
  void set_fabric_stats(std::size_t index, std::function<fabric::FabricStats()> source);

  std::size_t port_count() const { return ports_.size(); }
  PortRuntime& port(std::size_t index) { return *ports_[index].runtime; }
  std::string stats_json() const;
  // One line for `systemctl status`: "2 of 2 ports active, 1234 paths cached".
  std::string status_line() const;
  // Writes the snapshot now; false (and logged) on failure or when no cache_file is set.
  bool write_snapshot();

  core::Resolver& resolver(std::size_t port_index = 0) { return ports_[port_index].runtime->resolver(); }
  // Paths in the shared table now (0 without one).
  std::size_t table_published() const { return table_.published(); }
  const DaemonConfig& config() const { return config_; }

 private:
  // One served port. Members in this order: the runtime is destroyed before its fabric.
  struct PortSlot {
    PortSpec spec;
    std::unique_ptr<PortFabric> fabric;
    std::unique_ptr<PortRuntime> runtime;
    std::function<fabric::FabricStats()> stats;
  };
  void add_port(const PortSpec& spec);
  void remove_port(std::size_t index);
  void load_snapshot_entries(const std::vector<core::CacheEntryView>& entries);
  nlohmann::json ports_json() const;
  void schedule_snapshot();
  NativeLimits native_limits() const;
  bool privileged(const PeerCredentials& peer) const;  // root or admin_group (or the injected rule)
  SharedUsers shared_users();  // what both sockets share about their users
  void start_local_sa();
  void start_kernel_neighbours();
  void open_table();
  shm::PathTableWriter* grow_table();  // TablePublisher::Grow
  void shrink_table();  // after a republish: a smaller file if most paths went (shm::TableFile::shrink)
  void refresh_table();  // clears the shared table and republishes what is still valid
  void schedule_table_expiry();
  void on_table_hits(const protocol::TableHits& hits);

  asio::io_context& loop_;
  BusyPoll& busy_poll_;  // the loop's (run_loop): its window is busy_poll_us
  DaemonConfig config_;
  BatchClock clock_;  // steady_clock's time (so is the tick timer's), held still per read batch
  TablePublisher table_;  // observes every port's Resolver
  std::unique_ptr<shm::TableFile> table_file_;
  bool table_growth_failed_ = false;  // warned once: the table then stays at its size
  FabricFactory make_fabric_;
  std::vector<PortSlot> ports_;  // in the router's order
  PortRouter router_;  // every request reaches its port's gate through it
  ServerCounters counters_;
  std::optional<gid_t> admin_gid_;
  std::function<bool(const PeerCredentials&)> may_administer_;
  ReplyCeiling reply_ceiling_;  // both sockets' unread replies: before the servers, which use it
  PendingShares pending_shares_;  // both sockets' pending requests per uid: likewise
  UserCounters user_counters_;    // both sockets' requests and connections per uid: likewise
  NativeServer native_;
  std::unique_ptr<AcmServer> acm_;
  std::unique_ptr<kernel::LocalSaResponder> local_sa_;  // the kernel's local SA, where it can run
  std::unique_ptr<kernel::NeighbourMonitor> kernel_neighbours_;  // the kernel's ARP/ND table
  asio::steady_timer snapshot_timer_;
  asio::steady_timer grace_timer_;
  asio::steady_timer table_timer_;
  std::optional<core::TimePoint> table_armed_for_;
  std::chrono::steady_clock::time_point started_;
  bool started_ports_ = false;  // start() ran: a port added now starts at once
  bool stopping_ = false;
};

}  // namespace ibat::server
