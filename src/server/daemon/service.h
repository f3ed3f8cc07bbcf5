// Service: everything ibatd runs on its event loop, minus the fabric. It owns the Resolver (every
// input, the fabric's events included, passes its ResolverGate, which keeps the tick timer armed),
// the native and ACM socket servers, the periodic warm-cache snapshot, config reloads and the orderly shutdown.
// It takes any core::QuerySink, so tests run it with a fake SA and the daemon with a FabricPort
// (made by a factory the Service hands its own fabric events to).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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
#include "server/daemon/resolver_gate.h"
#include "server/daemon/sa_health.h"
#include "server/daemon/table_publisher.h"
#include "shm/table_file.h"

namespace ibat::server {

class AcmServer;

class Service {
 public:
  // `may_administer` decides who may run NEIGH_ADD/DEL and FLUSH; empty: root or admin_group.
  Service(asio::io_context& loop, const DaemonConfig& config, core::QuerySink& sink,
          std::function<bool(const PeerCredentials&)> may_administer = {});
  // The daemon's form: `make_sink` gets the events the fabric reports to this Service
  // (fabric_events()) and returns the sink (the FabricPort) that outlives the Service.
  using SinkFactory = std::function<core::QuerySink&(fabric::FabricEvents)>;
  Service(asio::io_context& loop, const DaemonConfig& config, const SinkFactory& make_sink,
          std::function<bool(const PeerCredentials&)> may_administer = {});
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

  // Fabric inputs, on the loop thread; fabric_events() calls these.
  fabric::FabricEvents fabric_events();
  void on_query_result(core::QueryId id, const core::QueryResult& result);
  void on_table_result(core::QueryId id, const core::TableResult& result);
  void on_local_port(const core::LocalPort& port);
  void on_sm_changed();
  void on_gid_out_of_service(const core::Gid& gid);
  void on_gid_in_service(const core::Gid& gid);
  void on_broadcast_params(const core::BroadcastParams& params);

  // Where STATS gets the fabric counters from (default: zeros, no fabric).
  void set_fabric_stats(std::function<fabric::FabricStats()> source);
  // The local port the ACM endpoint describes (EP_QUERY) and resolves from.
  void set_port_info(std::function<core::LocalPort()> source);

  std::string stats_json() const;
  // Writes the snapshot now; false (and logged) on failure or when no cache_file is set.
  bool write_snapshot();

  core::Resolver& resolver() { return resolver_; }
  // Paths in the shared table now (0 without one).
  std::size_t table_published() const { return table_.published(); }
  const DaemonConfig& config() const { return config_; }

 private:
  void schedule_snapshot();
  NativeLimits native_limits() const;
  void start_local_sa();
  void start_kernel_neighbours();
  void open_table();
  void refresh_table();  // clears the shared table and republishes what is still valid
  void schedule_table_expiry();
  void on_table_hits(const protocol::TableHits& hits);

  asio::io_context& loop_;
  BusyPoll& busy_poll_;  // the loop's (run_loop): its window is busy_poll_us
  DaemonConfig config_;
  BatchClock clock_;  // steady_clock's time (so is the tick timer's), held still per read batch
  TablePublisher table_;     // the Resolver's QuerySink: forwards to the fabric's
  std::unique_ptr<shm::TableFile> table_file_;
  core::Resolver resolver_;
  ResolverGate gate_;  // every input to resolver_ passes here; it runs Resolver::tick()
  ServerCounters counters_;
  std::optional<gid_t> admin_gid_;
  std::function<bool(const PeerCredentials&)> may_administer_;
  std::function<fabric::FabricStats()> fabric_stats_;
  std::function<core::LocalPort()> port_info_;
  NativeServer native_;
  std::unique_ptr<AcmServer> acm_;
  std::unique_ptr<kernel::LocalSaResponder> local_sa_;  // the kernel's local SA, where it can run
  std::unique_ptr<kernel::NeighbourMonitor> kernel_neighbours_;  // the kernel's ARP/ND table
  asio::steady_timer snapshot_timer_;
  asio::steady_timer grace_timer_;
  asio::steady_timer table_timer_;
  std::optional<core::TimePoint> table_armed_for_;
  std::chrono::steady_clock::time_point started_;
  std::optional<core::LocalPort> last_port_;
  SaHealth sa_health_;
  bool stopping_ = false;
};

}  // namespace ibat::server
