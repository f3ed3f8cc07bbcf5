// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The daemon's loop-side logic: its ports, sockets, the shared table, periodic snapshot, reload
// and shutdown.
#include "server/daemon/service.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/daemon/acm_server.h"
#include "server/daemon/log_limiter.h"
#include "server/daemon/logging.h"
#include "server/daemon/snapshot.h"

namespace ibat::server {

using std::chrono::steady_clock;

namespace {

// Entries listed at a time when the table is republished: the memory of one page, not of every
// port's entries at once (which malloc keeps after the republish).
constexpr std::size_t kRepublishPage = 1024;

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

// A fake SA behind the test's form of the Service: no fabric of its own to report or start.
class SinkOnlyFabric final : public Service::PortFabric {
 public:
  explicit SinkOnlyFabric(core::QuerySink& sink) : sink_(sink) {}
  core::QuerySink& sink() override { return sink_; }
  fabric::FabricStats stats() const override { return {}; }
  std::optional<core::LocalPort> opened_port() const override { return std::nullopt; }
  void start() override {}
  void stop() override {}

 private:
  core::QuerySink& sink_;
};

nlohmann::json busy_poll_json(const BusyPoll& busy) {
  const BusyPoll::Counters& c = busy.counters();
  const auto polled_us = std::chrono::duration_cast<std::chrono::microseconds>(c.polled);  // whole us
  return {{"window_us", busy.window().count()}, {"spells", c.spells}, {"caught", c.caught},
          {"crowded_stops", busy.crowded_stops()}, {"polled_s", std::chrono::duration<double>(polled_us).count()}};
}

}  // namespace

Service::Service(asio::io_context& loop, const DaemonConfig& config, core::QuerySink& sink,
                 std::function<bool(const PeerCredentials&)> may_administer)
    : Service(loop, config, {PortSpec{"", 0}},
              [&sink](const PortSpec&, fabric::FabricEvents) -> std::unique_ptr<PortFabric> {
                return std::make_unique<SinkOnlyFabric>(sink);
              },
              std::move(may_administer)) {}

Service::Service(asio::io_context& loop, const DaemonConfig& config, const std::vector<PortSpec>& ports,
                 FabricFactory make_fabric, std::function<bool(const PeerCredentials&)> may_administer)
    : loop_(loop),
      busy_poll_(asio::use_service<BusyPoll>(loop)),
      config_(config),
      make_fabric_(std::move(make_fabric)),
      admin_gid_(resolve_admin_group(config.server.admin_group)),
      may_administer_(std::move(may_administer)),
      reply_ceiling_(config.server.max_queued_bytes_total, config.server.max_queued_bytes_per_uid),
      pending_shares_(config.server.max_pending_per_uid),
      native_(loop, router_,
              NativeHooks{[this] { return stats_json(); },
                          [this](const PeerCredentials& peer) { return privileged(peer); },
                          [this] { refresh_table(); },
                          [this](const protocol::TableHits& hits) { on_table_hits(hits); },
                          &clock_},
              counters_),
      snapshot_timer_(loop),
      grace_timer_(loop),
      table_timer_(loop),
      started_(steady_clock::now()) {
  for (const PortSpec& spec : ports) add_port(spec);
  router_.set_default_port(config.fabric_ports.default_port);
}

void Service::add_port(const PortSpec& spec) {
  PortHooks hooks{[this](nlohmann::json event) { native_.publish(event); }, [this] { refresh_table(); }};
  PortSlot slot;
  slot.spec = spec;
  slot.runtime = std::make_unique<PortRuntime>(
      loop_, config_.policy, clock_,
      [&](fabric::FabricEvents events) -> core::QuerySink& {
        slot.fabric = make_fabric_(spec, std::move(events));
        return slot.fabric->sink();
      },
      spec.device, spec.number, std::move(hooks));
  PortRuntime& p = *slot.runtime;
  PortFabric& f = *slot.fabric;
  if (f.opened_port()) p.set_port_info([&f] { return *f.opened_port(); });
  slot.stats = [&f] { return f.stats(); };
  p.resolver().set_path_observer([this](const core::PathChange& c) {
    table_.on_change(c);
    native_.publish(event_json("path", {{"sgid", c.sgid.to_string()},
                                        {"dgid", c.dgid.to_string()},
                                        {"pkey", c.pkey.to_string()},
                                        {"old_state", core::to_string(c.old_state)},
                                        {"state", core::to_string(c.state)},
                                        {"old_dlid", c.old_dlid.value},
                                        {"dlid", c.dlid.value}}));
  });
  // Before the completions the same answer brings: a client that resolves again as soon as it has
  // its reply finds the path in the table.
  p.resolver().set_store_observer([this](const core::PathStored& stored) {
    if (!table_.attached()) return;
    table_.on_stored(stored, config_.policy.path_ttl);
    schedule_table_expiry();
  });
  router_.add(RoutedPort{&p.gate(), spec.device, spec.number, [&p] { return p.local_port(); }});
  ports_.push_back(std::move(slot));
  if (!started_ports_) return;
  p.gate().arm();
  f.start();
}

void Service::remove_port(std::size_t index) {
  PortSlot& slot = ports_[index];
  slot.runtime->resolver().cancel_all(core::Error::unreachable);  // completions queue the replies
  slot.runtime->gate().stop();
  slot.fabric->stop();
  slot.fabric.reset();
  router_.remove(index);
  ports_.erase(ports_.begin() + static_cast<std::ptrdiff_t>(index));
}

void Service::set_ports(const std::vector<PortSpec>& wanted) {
  bool changed = false;
  for (std::size_t i = ports_.size(); i-- > 0;) {
    if (std::find(wanted.begin(), wanted.end(), ports_[i].spec) != wanted.end()) continue;
    spdlog::warn("port {} is gone (its CA was removed): no longer served, its waiting requests fail unreachable",
                 ports_[i].spec.name());
    native_.publish(event_json("port_removed", {{"device", ports_[i].spec.device}, {"port", ports_[i].spec.number}}));
    remove_port(i);
    changed = true;
  }
  for (const PortSpec& spec : wanted) {
    const bool served = std::any_of(ports_.begin(), ports_.end(), [&](const PortSlot& s) { return s.spec == spec; });
    if (served) continue;
    try {
      add_port(spec);
    } catch (const std::exception& e) {
      spdlog::error("port {} appeared but cannot be served: {}", spec.name(), e.what());
      continue;
    }
    spdlog::info("port {} appeared: serving it", spec.name());
    native_.publish(event_json("port_added", {{"device", spec.device}, {"port", spec.number}}));
    changed = true;
  }
  if (changed) refresh_table();
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
      load_snapshot_entries(snapshot.entries);
      spdlog::info("warm cache: {} paths loaded from {} (stale, revalidating)", snapshot.entries.size(),
                   cache_file);
    }
  }
  busy_poll_.set_window(std::chrono::microseconds(config_.server.busy_poll_us));
  native_.set_users(shared_users());
  native_.listen(config_.server.socket, config_.server.socket_mode, native_limits());
  spdlog::info("listening on {} (native protocol)", config_.server.socket);
  if (config_.server.shared_table) open_table();
  if (!config_.server.acm_socket.empty()) {
    acm_ = std::make_unique<AcmServer>(loop_, router_, counters_);
    acm_->set_users(shared_users());
    acm_->listen(config_.server.acm_socket, config_.server.socket_mode, config_.server.max_connections,
                 config_.server.max_connections_per_uid);
    spdlog::info("listening on {} (ACM protocol)", config_.server.acm_socket);
  }
  start_local_sa();
  start_kernel_neighbours();
  schedule_snapshot();
  started_ports_ = true;
  for (PortSlot& slot : ports_) {
    slot.runtime->gate().arm();
    slot.fabric->start();
  }
}

void Service::start_local_sa() {
  const LinuxOptions& options = config_.linux_host;
  if (!options.local_sa) return;
  kernel::LocalSaOptions sa{true, options.local_sa_socket,
                            std::chrono::duration_cast<std::chrono::milliseconds>(options.local_sa_deadline)};
  local_sa_ = std::make_unique<kernel::LocalSaResponder>(
      loop_, sa, [this](const kernel::ResolveQuery& query, const core::ResolveRequest& request, core::Completion done) {
        router_.resolve_on(query.device, query.port_num, request, std::move(done));
      });
  if (!local_sa_->start()) local_sa_.reset();
}

void Service::start_kernel_neighbours() {
  if (!config_.linux_host.neighbours) return;
  kernel_neighbours_ = std::make_unique<kernel::NeighbourMonitor>(
      loop_, kernel::NeighbourMirror::Sink{
                 [this](const core::IpAddr& ip, const core::HwAddr& hw, const std::optional<kernel::IpoibPort>& port) {
                   router_.on_kernel_neighbour(ip, hw, port);
                 },
                 [this](const core::IpAddr& ip, const std::optional<kernel::IpoibPort>& port) {
                   router_.on_kernel_neighbour_removed(ip, port);
                 }});
  if (!kernel_neighbours_->start()) kernel_neighbours_.reset();
}

NativeLimits Service::native_limits() const {
  return NativeLimits{config_.server.max_connections, config_.server.max_outstanding_per_connection,
                      config_.server.max_queued_bytes_per_connection, config_.server.max_connections_per_uid};
}

bool Service::privileged(const PeerCredentials& peer) const {
  return may_administer_ ? may_administer_(peer) : is_privileged(peer, admin_gid_);
}

SharedUsers Service::shared_users() {
  return SharedUsers{&reply_ceiling_, &pending_shares_, &user_counters_, [this](const PeerCredentials& peer) {
                       return privileged(peer) ? config_.server.admin_share : 1u;
                     }};
}

void Service::open_table() {
  const std::string path = shm::table_path_for_socket(config_.server.socket);
  std::string error;
  // Created at its smallest and grown with the paths it holds (the republish below grows it to
  // what is valid now), up to room for every port's Resolver holding `capacity` paths.
  const std::uint64_t paths = std::uint64_t{config_.policy.capacity} * ports_.size();
  const auto capacity = static_cast<std::uint32_t>(std::min<std::uint64_t>(paths, UINT32_MAX));
  table_file_ = shm::TableFile::create(path, shm::kMinSlots, shm::slots_for_capacity(capacity), error);
  if (!table_file_) {
    spdlog::error("{}: clients resolve through the socket only", error);
    return;
  }
  table_growth_failed_ = false;
  table_.attach(&table_file_->writer(), [this] { return grow_table(); });
  refresh_table();
  spdlog::info("shared path table {} ({} slots, grown up to {})", path, table_file_->writer().slot_count(),
               shm::slots_for_capacity(capacity));
}

shm::PathTableWriter* Service::grow_table() {
  std::string error;
  if (!table_file_->grow(error) && !table_growth_failed_) {
    table_growth_failed_ = true;
    spdlog::warn("{}: paths it has no room for are answered through the socket", error);
  }
  return &table_file_->writer();
}

void Service::refresh_table() {
  if (!table_.attached()) return;
  // Clients that name no source GID look up the default port's.
  if (!ports_.empty())
    table_.set_defaults(ports_[router_.default_port()].runtime->local_port().gid, config_.policy.default_pkey);
  // A port whose cable is out serves nothing (its Resolver fails its requests): nor does the table.
  table_.clear();
  router_.for_each_entry_page(true, kRepublishPage, [this](const std::vector<core::CacheEntryView>& page) {
    table_.publish_valid(page, clock_.now(), config_.policy.path_ttl);
  });
  shrink_table();
  schedule_table_expiry();
}

void Service::shrink_table() {
  const std::uint32_t slots = table_file_->writer().slot_count();
  std::string error;
  if (table_file_->shrink(error)) {
    table_.follow(&table_file_->writer());
    spdlog::info("shared path table {}: {} paths, {} slots now (was {})", table_file_->path(), table_.published(),
                 table_file_->writer().slot_count(), slots);
  } else if (!error.empty()) {
    spdlog::warn("{}: the table keeps its {} slots", error, slots);
  }
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
    router_.resolve(request, [](core::RequestId, const core::ResolveResult&) {});
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
  std::vector<std::uint8_t> bytes = encode_snapshot(router_.entries(), std::chrono::system_clock::now());
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
  std::uint64_t pending = 0;
  for (const PortSlot& slot : ports_) pending += slot.runtime->resolver().stats().pending;
  spdlog::info("shutting down: {} requests pending are cancelled", pending);
  for (PortSlot& slot : ports_) slot.runtime->resolver().cancel_all();  // completions queue `cancelled` replies
  if (local_sa_) local_sa_->stop();  // after cancel_all: the kernel got F_ERR and asks the SA
  client_log_limiter().flush();
  if (kernel_neighbours_) kernel_neighbours_->stop();
  write_snapshot();
  stopping_ = true;
  table_.attach(nullptr);
  table_file_.reset();  // readers see an empty table, then none
  table_timer_.cancel();
  for (PortSlot& slot : ports_) slot.runtime->gate().stop();
  snapshot_timer_.cancel();
  if (acm_) acm_->close();
  auto finished = std::make_shared<bool>(false);
  auto finish = [this, done = std::move(done), finished] {
    if (*finished) return;
    *finished = true;
    grace_timer_.cancel();
    for (PortSlot& slot : ports_) slot.fabric->stop();
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
  config_.server.max_connections_per_uid = next.server.max_connections_per_uid;
  config_.server.max_outstanding_per_connection = next.server.max_outstanding_per_connection;
  config_.server.max_queued_bytes_per_connection = next.server.max_queued_bytes_per_connection;
  config_.server.max_queued_bytes_total = next.server.max_queued_bytes_total;
  config_.server.max_queued_bytes_per_uid = next.server.max_queued_bytes_per_uid;
  reply_ceiling_.set_limits(config_.server.max_queued_bytes_total, config_.server.max_queued_bytes_per_uid);
  config_.server.admin_share = next.server.admin_share;  // for connections from here on
  config_.server.max_pending_per_uid = next.server.max_pending_per_uid;
  pending_shares_.set_limit(config_.server.max_pending_per_uid);  // pending ones stay; new ones meet it
  config_.server.busy_poll_us = next.server.busy_poll_us;
  busy_poll_.set_window(std::chrono::microseconds(config_.server.busy_poll_us));
  for (PortSlot& slot : ports_) slot.runtime->gate().set_policy(config_.policy);  // deadlines may move earlier
  refresh_table();  // the TTL or the default P_Key may have changed
  set_log_level(config_.log_level);
  admin_gid_ = resolve_admin_group(config_.server.admin_group);
  native_.set_limits(native_limits());
  if (acm_) acm_->set_max_connections(config_.server.max_connections, config_.server.max_connections_per_uid);
  snapshot_timer_.cancel();
  schedule_snapshot();
}

void Service::load_snapshot_entries(const std::vector<core::CacheEntryView>& entries) {
  // Each entry goes to the port of its source GID; on one port, all of them (its Resolver drops
  // the entries of a GID that is not its own once the port is known).
  std::vector<std::vector<core::CacheEntryView>> by_port(ports_.size());
  for (const core::CacheEntryView& e : entries) {
    std::optional<std::size_t> index = ports_.size() == 1 ? std::optional<std::size_t>(0) : router_.find(e.sgid);
    if (index) by_port[*index].push_back(e);
  }
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (!by_port[i].empty()) ports_[i].runtime->gate().load_stale(by_port[i]);
}

void Service::set_fabric_stats(std::size_t index, std::function<fabric::FabricStats()> source) {
  ports_[index].stats = std::move(source);
}

nlohmann::json Service::ports_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    const PortRuntime& p = *ports_[i].runtime;
    const core::LocalPort port = p.local_port();
    const core::Stats s = p.resolver().stats();
    const fabric::FabricStats f = ports_[i].stats();
    nlohmann::json item = server::stats_json(s, f, ServerCounters{}, std::chrono::seconds{0});
    for (const char* host_only : {"server", "uptime_s", "version", "table_hits"}) item.erase(host_only);
    item["name"] = p.name();
    item["device"] = p.device();
    item["port"] = p.number();
    item["state"] = port.active ? "active" : port.link_down ? "link_down" : "down";
    item["gid"] = port.gid.to_string();
    item["subnet_prefix"] = fmt::format("{:#018x}", port.gid.subnet_prefix());
    item["lid"] = port.lid.value;
    item["sm_lid"] = port.sm_lid.value;
    item["default"] = i == router_.default_port();
    if (auto silent = p.sa_silent_since())
      item["sa_silent_s"] = std::chrono::duration<double>(std::chrono::system_clock::now() - *silent).count();
    out.push_back(std::move(item));
  }
  return out;
}

std::string Service::stats_json() const {
  core::Stats total;
  fabric::FabricStats fabric;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    total += ports_[i].runtime->resolver().stats();
    const fabric::FabricStats f = ports_[i].stats();
    if (i == 0) fabric = f; else fabric += f;
  }
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(steady_clock::now() - started_);
  nlohmann::json out = server::stats_json(total, fabric, counters_, uptime);  // the host's totals
  out["server"]["users"] = users_json(user_counters_.top(UserCounters::kReportedUids), pending_shares_);
  out["ports"] = ports_json();
  out["local_sa"] = local_sa_json(local_sa_ ? local_sa_->stats() : kernel::LocalSaStats{});
  out["kernel_neighbours"] = kernel_neighbours_json(kernel_neighbours_ ? kernel_neighbours_->stats()
                                                                       : kernel::NeighbourMonitorStats{});
  out["busy_poll"] = busy_poll_json(busy_poll_);
  // The running configuration, as SIGHUP left it (`ibat config`): every key, rendered as TOML.
  nlohmann::json config = nlohmann::json::array();
  for (const ConfigItem& item : describe(config_))
    config.push_back({{"key", item.key}, {"value", item.value}, {"reloadable", item.reloadable}});
  out["config"] = std::move(config);
  return out.dump();
}

std::string Service::status_line() const {
  std::size_t active = 0;
  std::uint64_t entries = 0;
  for (const PortSlot& slot : ports_) {
    if (slot.runtime->local_port().active) ++active;
    entries += slot.runtime->resolver().stats().entries;
  }
  return fmt::format("{} of {} port{} active, {} path{} cached", active, ports_.size(), ports_.size() == 1 ? "" : "s",
                     entries, entries == 1 ? "" : "s");
}

}  // namespace ibat::server
