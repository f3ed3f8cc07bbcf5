// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// JSON renderings of counters, cache entries, neighbours and events for the native protocol.
#include "server/daemon/json_views.h"

#include <fmt/format.h>

namespace ibat::server {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

json stats_json(const core::Stats& s, const fabric::FabricStats& f, const ServerCounters& server,
                std::chrono::seconds uptime) {
  json failures = json::object();
  for (std::size_t i = 1; i < s.failures_by_reason.size(); ++i) {
    std::string_view reason = core::to_string(static_cast<core::Error>(i));
    if (reason.empty() || reason == "unknown") continue;
    failures[std::string(reason)] = s.failures_by_reason[i];
  }
  failures["total"] = s.failures;
  return json{
      {"resolves", s.resolves},
      {"cache_hits", s.cache_hits},
      {"table_hits", server.table_hits},
      {"stale_hits", s.stale_hits},
      {"provisional_hits", s.provisional_hits},
      {"stale_holds", s.stale_holds},
      {"stale_fallbacks", s.stale_fallbacks},
      {"misses", s.misses},
      {"coalesced", s.coalesced},
      {"sa_queries", s.sa_queries},
      {"sa_retries", s.sa_retries},
      {"sa_timeouts", s.sa_timeouts},
      {"sa_errors", s.sa_errors},
      {"rejected_paths", s.rejected_paths},
      {"revalidations", s.revalidations},
      {"sa_tables", s.sa_tables},
      {"sa_tables_answered", s.sa_tables_answered},
      {"sa_tables_failed", s.sa_tables_failed},
      {"sa_probes", s.sa_probes},
      {"sa_turns_waited_max", s.sa_turns_waited_max},
      {"table_paths", s.table_paths},
      {"table_skipped", s.table_skipped},
      {"failures", failures},
      {"evictions", s.evictions},
      {"entries", s.entries},
      {"pending", s.pending},
      {"inflight", s.inflight},
      {"sa_window", s.sa_window},
      {"sm_changes", s.sm_changes},
      {"lid_changes", s.lid_changes},
      {"neighbours", s.neighbours},
      {"uptime_s", uptime.count()},
      {"version", IBAT_VERSION},
      {"fabric",
       {{"mads_sent", f.mads_sent},
        {"local_mads_sent", f.local_mads_sent},
        {"remote_mads_sent", f.remote_mads_sent},
        {"port_events", f.port_events},
        {"mads_received", f.mads_received},
        {"mad_timeouts", f.mad_timeouts},
        {"mad_retries", f.mad_retries},
        {"late_or_duplicate", f.late_or_duplicate},
        {"invalid_responses", f.invalid_responses},
        {"reports", f.reports},
        {"rejected_reports", f.rejected_reports},
        {"oversized_mads", f.oversized_mads},
        {"sa_gettables_sent", f.sa_gettables_sent},
        {"sa_gettables_answered", f.sa_gettables_answered},
        {"sa_table_records", f.sa_table_records},
        {"sa_table_bytes", f.sa_table_bytes},
        {"sa_srtt_us", f.sa_srtt_us},
        {"sa_table_ns_per_record", f.sa_table_ns_per_record},
        {"sa_mad_timer_floor_us", f.sa_mad_timer_floor_us},
        {"sa_table_timer_floor_us", f.sa_table_timer_floor_us},
        {"sm_changes", f.sm_changes}}},
      {"server",
       {{"connections", server.native.connections},
        {"connections_total", server.native.connections_total},
        {"connections_refused", server.native.refused},
        {"connections_refused_per_uid", server.native.refused_per_uid + server.acm.refused_per_uid},
        {"clients_pending", server.native.pending + server.acm.pending},
        {"pending_refused_per_uid", server.native.pending_refused_per_uid + server.acm.pending_refused_per_uid},
        {"protocol_errors", server.protocol_errors},
        {"slow_clients", server.native.slow_clients},
        {"cut_over_ceiling", server.native.cut_over_ceiling + server.acm.cut_over_ceiling},
        {"cut_over_uid_share", server.native.cut_over_uid_share + server.acm.cut_over_uid_share},
        {"denied", server.denied},
        {"acm_connections", server.acm.connections},
        {"acm_connections_total", server.acm.connections_total},
        {"acm_connections_refused", server.acm.refused},
        {"acm_slow_clients", server.acm.slow_clients},
        {"acm_requests", server.acm_requests},
        {"acm_errors", server.acm_errors},
        {"acm_protocol_errors", server.acm_protocol_errors}}},
  };
}

json users_json(const UserCounters::Top& top, const PendingShares& pending) {
  auto counts = [](const UserCounters::Counts& c, std::uint64_t held) {
    return json{{"resolves", c.resolves}, {"resolves_refused", c.resolves_refused}, {"pending", held},
                {"connections", c.connections}, {"connections_refused", c.connections_refused}};
  };
  json users = json::array();
  std::uint64_t shown_pending = 0;
  for (const auto& [uid, c] : top.users) {
    const std::uint32_t held = pending.held(uid);
    shown_pending += held;
    json item = counts(c, held);
    item["uid"] = uid;
    users.push_back(std::move(item));
  }
  json others = counts(top.others, pending.total() - shown_pending);
  others["uids"] = top.other_uids;
  return json{{"top", std::move(users)}, {"others", std::move(others)}};
}

json paths_json(const std::vector<core::CacheEntryView>& entries) {
  json out = json::array();
  for (const auto& e : entries) {
    json item{{"sgid", e.sgid.to_string()},
              {"dgid", e.dgid.to_string()},
              {"pkey", e.pkey.to_string()},
              {"state", core::to_string(e.state)}};
    if (auto sid = e.qos.sent_service_id()) item["service_id"] = fmt::format("{:#x}", *sid);
    if (auto qc = e.qos.sent_qos_class()) item["qos_class"] = *qc;
    bool has_path = e.state == core::EntryState::valid || e.state == core::EntryState::stale ||
                    e.state == core::EntryState::provisional;
    if (has_path) {
      item["dlid"] = e.path.dlid.value;
      item["slid"] = e.path.slid.value;
      item["sl"] = e.path.sl;
      item["mtu"] = core::mtu_bytes(e.path.mtu).value_or(0);
      item["rate"] = core::rate_gbps(e.path.rate).value_or(0.0);
      item["pkt_life"] = e.path.pkt_life;
      item["age_ms"] = duration_cast<milliseconds>(e.age).count();
      item["origin"] = core::to_string(e.origin);
    }
    item["idle_ms"] = duration_cast<milliseconds>(e.idle).count();
    if (e.last_error != core::Error::ok) item["last_error"] = core::to_string(e.last_error);
    out.push_back(std::move(item));
  }
  return out;
}

json neighbours_json(const std::vector<core::Resolver::NeighbourView>& neighbours) {
  json out = json::array();
  for (const auto& n : neighbours) {
    out.push_back(json{{"ip", n.ip.to_string()},
                       {"hw", n.hw.to_string()},
                       {"gid", n.hw.gid().to_string()},
                       {"qpn", n.hw.qpn()},
                       {"slid", n.source_lid ? json(n.source_lid->value) : json(nullptr)}});
  }
  return out;
}

json event_json(std::string_view name, json fields) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  fields["event"] = name;
  fields["time_ms"] = duration_cast<milliseconds>(now).count();
  return fields;
}

}  // namespace ibat::server
