// The daemon's loop-side logic: fabric event fan-out (with WATCH events), sockets,
// periodic snapshot, reload and shutdown.
#include "server/daemon/service.h"

#include <spdlog/spdlog.h>

#include "server/daemon/acm_server.h"
#include "server/daemon/log_limiter.h"
#include "server/daemon/logging.h"
#include "server/daemon/snapshot.h"

namespace ibat::server {

using std::chrono::steady_clock;

namespace {

std::optional<gid_t> resolve_admin_group(const std::string& name) {
  std::optional<gid_t> gid = lookup_group(name);
  if (!name.empty() && !gid) spdlog::warn("admin_group '{}' does not exist: only root may administer", name);
  return gid;
}

nlohmann::json local_sa_json(const kernel::LocalSaStats& s) {
  std::uint64_t failed = 0;
  for (const auto& [reason, n] : s.errors) failed += n;
  nlohmann::json errors(s.errors);
  errors["total"] = failed;
  return {{"running", s.running},         {"requests", s.requests},
          {"answered", s.answered},       {"errors", errors},
          {"answer_p50_us", s.answer_p50_us}, {"answer_p99_us", s.answer_p99_us}};
}

nlohmann::json kernel_neighbours_json(const kernel::NeighbourMonitorStats& s) {
  return {{"running", s.running},        {"ipoib", s.table.ipoib},
          {"other", s.table.other},      {"updates", s.table.updates},
          {"removals", s.table.removals}, {"ignored_non_ipoib", s.table.ignored_non_ipoib},
          {"dumps", s.table.dumps},      {"overruns", s.overruns},
          {"malformed", s.malformed}};
}

nlohmann::json busy_poll_json(const BusyPoll& busy) {
  const BusyPoll::Counters& c = busy.counters();
  const auto polled_us = std::chrono::duration_cast<std::chrono::microseconds>(c.polled);  // whole us
  return {{"window_us", busy.window().count()}, {"spells", c.spells}, {"caught", c.caught},
          {"crowded_stops", busy.crowded_stops()}, {"polled_s", std::chrono::duration<double>(polled_us).count()}};
}

}  // namespace

Service::Service(asio::io_context& loop, const DaemonConfig& config, core::QuerySink& sink,
                 std::function<bool(const PeerCredentials&)> may_administer)
    : Service(loop, config, [&sink](fabric::FabricEvents) -> core::QuerySink& { return sink; },
              std::move(may_administer)) {}

Service::Service(asio::io_context& loop, const DaemonConfig& config, const SinkFactory& make_sink,
                 std::function<bool(const PeerCredentials&)> may_administer)
    : loop_(loop),
      busy_poll_(asio::use_service<BusyPoll>(loop)),
      config_(config),
      table_(make_sink(fabric_events())),
      resolver_(config.policy, clock_, table_),
      gate_(loop, resolver_),
      admin_gid_(resolve_admin_group(config.server.admin_group)),
      may_administer_(std::move(may_administer)),
      native_(loop, gate_,
              NativeHooks{[this] { return stats_json(); },
                          [this](const PeerCredentials& peer) {
                            return may_administer_ ? may_administer_(peer) : is_privileged(peer, admin_gid_);
                          },
                          [this] { refresh_table(); },
                          [this](const protocol::TableHits& hits) { on_table_hits(hits); },
                          &clock_},
              counters_),
      snapshot_timer_(loop),
      grace_timer_(loop),
      table_timer_(loop),
      started_(steady_clock::now()) {
  resolver_.set_path_observer([this](const core::PathChange& c) {
    native_.publish(event_json("path", {{"sgid", c.sgid.to_string()},
                                        {"dgid", c.dgid.to_string()},
                                        {"pkey", c.pkey.to_string()},
                                        {"old_state", core::to_string(c.old_state)},
                                        {"state", core::to_string(c.state)},
                                        {"old_dlid", c.old_dlid.value},
                                        {"dlid", c.dlid.value}}));
  });
}

Service::~Service() = default;

void Service::start() {
  const std::string& cache_file = config_.snapshot.cache_file;
  if (!cache_file.empty()) {
    std::string problem = prepare_snapshot_directory(cache_file);
    if (!problem.empty()) spdlog::warn("warm cache: {}", problem);
    SnapshotContents snapshot =
        load_snapshot_file(cache_file, std::chrono::system_clock::now(), config_.policy.capacity);
    if (!snapshot.ok()) {
      spdlog::error("warm cache ignored: {}", snapshot.error);
    } else if (!snapshot.entries.empty()) {
      gate_.load_stale(snapshot.entries);
      spdlog::info("warm cache: {} paths loaded from {} (stale, revalidating)", snapshot.entries.size(),
                   cache_file);
    }
  }
  busy_poll_.set_window(std::chrono::microseconds(config_.server.busy_poll_us));
  native_.listen(config_.server.socket, config_.server.socket_mode, native_limits());
  spdlog::info("listening on {} (native protocol)", config_.server.socket);
  if (config_.server.shared_table) open_table();
  if (!config_.server.acm_socket.empty()) {
    acm_ = std::make_unique<AcmServer>(
        loop_, gate_, AcmHooks{[this] { return port_info_ ? port_info_() : core::LocalPort{}; }},
        counters_);
    acm_->listen(config_.server.acm_socket, config_.server.socket_mode, config_.server.max_connections);
    spdlog::info("listening on {} (ACM protocol)", config_.server.acm_socket);
  }
  start_local_sa();
  start_kernel_neighbours();
  schedule_snapshot();
  gate_.arm();
}

void Service::start_local_sa() {
  const LinuxOptions& options = config_.linux_host;
  if (!options.local_sa) return;
  kernel::LocalSaOptions sa{true, options.local_sa_socket,
                            std::chrono::duration_cast<std::chrono::milliseconds>(options.local_sa_deadline)};
  local_sa_ = std::make_unique<kernel::LocalSaResponder>(
      loop_, sa, [this](const core::ResolveRequest& request, core::Completion done) {
        gate_.resolve(request, std::move(done));
      });
  if (!local_sa_->start()) local_sa_.reset();
}

void Service::start_kernel_neighbours() {
  if (!config_.linux_host.neighbours) return;
  kernel_neighbours_ = std::make_unique<kernel::NeighbourMonitor>(
      loop_, kernel::NeighbourMirror::Sink{
                 [this](const core::IpAddr& ip, const core::HwAddr& hw) { gate_.on_neighbour(ip, hw); },
                 [this](const core::IpAddr& ip) { gate_.on_neighbour_removed(ip); }});
  if (!kernel_neighbours_->start()) kernel_neighbours_.reset();
}

NativeLimits Service::native_limits() const {
  return NativeLimits{config_.server.max_connections, config_.server.max_outstanding_per_connection,
                      config_.server.max_queued_bytes_per_connection};
}

void Service::open_table() {
  const std::string path = shm::table_path_for_socket(config_.server.socket);
  std::string error;
  table_file_ = shm::TableFile::create(path, shm::slots_for_capacity(config_.policy.capacity), error);
  if (!table_file_) {
    spdlog::error("{}: clients resolve through the socket only", error);
    return;
  }
  table_.attach(&table_file_->writer());
  table_.set_defaults(last_port_ ? last_port_->gid : core::Gid{}, config_.policy.default_pkey);
  spdlog::info("shared path table {} ({} slots)", path, table_file_->writer().slot_count());
}

void Service::refresh_table() {
  if (!table_.attached()) return;
  table_.republish(resolver_.entries(), clock_.now(), config_.policy.path_ttl);
  schedule_table_expiry();
}

void Service::on_table_hits(const protocol::TableHits& hits) {
  counters_.table_hits += hits.hits;
  // A cache-only resolve of each key used marks it used, so it is not evicted as idle.
  for (std::uint32_t slot : hits.slots) {
    std::optional<shm::TableKey> key = table_.key_at(slot, hits.generation);
    if (!key) continue;
    core::ResolveRequest request;
    request.target = key->destination();
    request.sgid = key->source();
    request.pkey = core::Pkey{key->pkey};
    request.cache_only = true;
    gate_.resolve(request, [](core::RequestId, const core::ResolveResult&) {});
  }
}

void Service::schedule_table_expiry() {
  std::optional<core::TimePoint> next = table_.next_expiry();
  if (stopping_ || !next || (table_armed_for_ && *table_armed_for_ <= *next)) return;
  table_armed_for_ = *next;
  table_timer_.expires_at(std::chrono::time_point_cast<steady_clock::duration>(
      steady_clock::time_point(next->time_since_epoch())));
  table_timer_.async_wait([this](asio::error_code ec) {
    if (ec) return;
    table_armed_for_.reset();
    table_.expire(clock_.now());
    schedule_table_expiry();
  });
}

void Service::schedule_snapshot() {
  if (stopping_ || config_.snapshot.cache_file.empty() || config_.snapshot.interval_s == 0) return;
  snapshot_timer_.expires_after(std::chrono::seconds(config_.snapshot.interval_s));
  snapshot_timer_.async_wait([this](asio::error_code ec) {
    if (ec) return;
    write_snapshot();
    schedule_snapshot();
  });
}

bool Service::write_snapshot() {
  const std::string& path = config_.snapshot.cache_file;
  if (path.empty()) return false;
  std::vector<std::uint8_t> bytes = encode_snapshot(resolver_.entries(), std::chrono::system_clock::now());
  std::string error = write_snapshot_file(path, bytes);
  if (!error.empty()) {
    spdlog::error("warm cache not written: {}", error);
    return false;
  }
  spdlog::debug("warm cache written to {} ({} bytes)", path, bytes.size());
  return true;
}

void Service::shutdown(std::function<void()> done, std::chrono::milliseconds grace) {
  if (stopping_) return;
  spdlog::info("shutting down: {} requests pending are cancelled", resolver_.stats().pending);
  resolver_.cancel_all();  // completions queue `cancelled` replies on the open connections
  if (local_sa_) local_sa_->stop();  // after cancel_all: the kernel got F_ERR and asks the SA
  client_log_limiter().flush();
  if (kernel_neighbours_) kernel_neighbours_->stop();
  write_snapshot();
  stopping_ = true;
  table_.attach(nullptr);
  table_file_.reset();  // readers see an empty table, then none
  table_timer_.cancel();
  gate_.stop();
  snapshot_timer_.cancel();
  if (acm_) acm_->close();
  auto finished = std::make_shared<bool>(false);
  auto finish = [this, done = std::move(done), finished] {
    if (*finished) return;
    *finished = true;
    grace_timer_.cancel();
    done();
  };
  grace_timer_.expires_after(grace);
  grace_timer_.async_wait([this, finish](asio::error_code ec) {
    if (ec) return;
    spdlog::warn("shutdown: {} connections did not drain in time", native_.connection_count());
    native_.abort_all();
    finish();
  });
  native_.drain(finish);
}

void Service::reload(const DaemonConfig& next) {
  std::vector<std::string> changes = describe_changes(config_, next);
  if (changes.empty()) {
    spdlog::info("reload: no changes");
    return;
  }
  for (const std::string& change : changes) spdlog::info("reload: {}", change);
  config_.policy = next.policy;
  config_.log_level = next.log_level;
  config_.snapshot = next.snapshot;
  config_.server.admin_group = next.server.admin_group;
  config_.server.max_connections = next.server.max_connections;
  config_.server.max_outstanding_per_connection = next.server.max_outstanding_per_connection;
  config_.server.max_queued_bytes_per_connection = next.server.max_queued_bytes_per_connection;
  config_.server.busy_poll_us = next.server.busy_poll_us;
  busy_poll_.set_window(std::chrono::microseconds(config_.server.busy_poll_us));
  gate_.set_policy(config_.policy);  // the new policy may move deadlines earlier
  table_.set_defaults(last_port_ ? last_port_->gid : core::Gid{}, config_.policy.default_pkey);
  refresh_table();  // the TTL or the default P_Key may have changed
  set_log_level(config_.log_level);
  admin_gid_ = resolve_admin_group(config_.server.admin_group);
  native_.set_limits(native_limits());
  if (acm_) acm_->set_max_connections(config_.server.max_connections);
  snapshot_timer_.cancel();
  schedule_snapshot();
}

void Service::on_query_result(core::QueryId id, const core::QueryResult& result) {
  if (auto line = sa_health_.on_result(result.error, std::chrono::system_clock::now()))
    line->warn ? spdlog::warn("{}", line->text) : spdlog::info("{}", line->text);
  // The table first: the Resolver's completions send replies, and a client that resolves the same
  // destination again as soon as it has its reply must find the path in the table.
  if (table_.attached()) {
    table_.on_query_result(id, result, clock_.now(), config_.policy.path_ttl);
    schedule_table_expiry();
  }
  gate_.on_query_result(id, result);
}

void Service::on_table_result(core::QueryId id, const core::TableResult& result) {
  const core::Stats before = resolver_.stats();
  gate_.on_table_result(id, result);
  const core::Stats after = resolver_.stats();
  if (after.sa_tables_answered > before.sa_tables_answered) {
    spdlog::info("subnet paths: {} from one GetTable ({} left out), {} cached", after.table_paths - before.table_paths,
                 after.table_skipped - before.table_skipped, after.entries);
    refresh_table();
  } else if (after.sa_tables_failed > before.sa_tables_failed) {
    spdlog::warn("subnet GetTable failed ({}: {}): paths are asked one GET at a time", core::to_string(result.error),
                 result.reason);
  }
}

void Service::on_local_port(const core::LocalPort& port) {
  bool lid_changed = last_port_ && last_port_->lid != port.lid;
  bool changed = !last_port_ || lid_changed || last_port_->active != port.active ||
                 last_port_->sm_lid != port.sm_lid || last_port_->gid != port.gid;
  gate_.on_local_port(port);
  if (changed) {
    spdlog::info("local port {} lid {} sm_lid {} {}", port.gid.to_string(), port.lid.value,
                 port.sm_lid.value, port.active ? "active" : "down");
    native_.publish(event_json("port", {{"gid", port.gid.to_string()},
                                        {"lid", port.lid.value},
                                        {"sm_lid", port.sm_lid.value},
                                        {"active", port.active}}));
  }
  if (lid_changed) {
    native_.publish(event_json("lid_change", {{"old_lid", last_port_->lid.value}, {"lid", port.lid.value}}));
  }
  last_port_ = port;
  if (changed) {
    table_.set_defaults(port.gid, config_.policy.default_pkey);
    refresh_table();
  }
}

void Service::on_sm_changed() {
  spdlog::info("SM changed: every path is stale and will be revalidated");
  gate_.on_sm_changed();
  refresh_table();
  // The port monitor reports the port (with the new SM LID) before the SM change it implies.
  nlohmann::json fields = nlohmann::json::object();
  if (last_port_) fields["sm_lid"] = last_port_->sm_lid.value;
  native_.publish(event_json("sm_change", std::move(fields)));
}

void Service::on_gid_out_of_service(const core::Gid& gid) {
  gate_.on_gid_out_of_service(gid);
  refresh_table();
  native_.publish(event_json("gid_out", {{"gid", gid.to_string()}}));
}

void Service::on_gid_in_service(const core::Gid& gid) {
  gate_.on_gid_in_service(gid);
  native_.publish(event_json("gid_in", {{"gid", gid.to_string()}}));
}

void Service::on_broadcast_params(const core::BroadcastParams& params) {
  gate_.on_broadcast_params(params);
}

fabric::FabricEvents Service::fabric_events() {
  fabric::FabricEvents events;
  events.on_query_result = [this](core::QueryId id, const core::QueryResult& r) { on_query_result(id, r); };
  events.on_table_result = [this](core::QueryId id, const core::TableResult& r) { on_table_result(id, r); };
  events.on_table_fallback = [](const std::string& reason) {
    spdlog::warn("PathRecord GetTables off until the next SM: {}; paths are asked one GET at a time", reason);
  };
  events.on_local_port = [this](const core::LocalPort& p) { on_local_port(p); };
  events.on_sm_changed = [this] { on_sm_changed(); };
  events.on_gid_out_of_service = [this](const core::Gid& g) { on_gid_out_of_service(g); };
  events.on_gid_in_service = [this](const core::Gid& g) { on_gid_in_service(g); };
  events.on_broadcast_params = [this](const core::BroadcastParams& b) { on_broadcast_params(b); };
  return events;
}

void Service::set_fabric_stats(std::function<fabric::FabricStats()> source) {
  fabric_stats_ = std::move(source);
}

void Service::set_port_info(std::function<core::LocalPort()> source) { port_info_ = std::move(source); }

std::string Service::stats_json() const {
  fabric::FabricStats fabric = fabric_stats_ ? fabric_stats_() : fabric::FabricStats{};
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(steady_clock::now() - started_);
  nlohmann::json out = server::stats_json(resolver_.stats(), fabric, counters_, uptime);
  out["local_sa"] = local_sa_json(local_sa_ ? local_sa_->stats() : kernel::LocalSaStats{});
  out["kernel_neighbours"] = kernel_neighbours_json(kernel_neighbours_ ? kernel_neighbours_->stats()
                                                                       : kernel::NeighbourMonitorStats{});
  out["busy_poll"] = busy_poll_json(busy_poll_);
  return out.dump();
}

}  // namespace ibat::server
