// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Text and JSON renderings of the CLI (see render.h).
#include "cli/render.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <vector>

namespace ibat::cli {
namespace {

using nlohmann::json;

std::string gid_text(const ibat_gid& gid) {
  char buf[64];
  ibat_format_gid(&gid, buf, sizeof buf);
  return buf;
}

std::string pkey_text(std::uint16_t pkey) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", pkey);
  return buf;
}

// A JSON scalar as plain text ("-" for null or missing).
std::string scalar(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? "-" : scalar(*it);
}

// Left-aligned columns separated by two spaces, header row first (no trailing blanks).
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  };
  emit(header);
  for (const auto& row : rows) emit(row);
  return out;
}

// "key: value" lines with the values aligned, ibstat style.
std::string key_values(const std::vector<std::pair<std::string, std::string>>& items, std::string_view indent) {
  std::size_t key_width = 0;
  for (const auto& [k, v] : items) key_width = std::max(key_width, k.size());
  std::string out;
  for (const auto& [k, v] : items)
    out += std::string(indent) + k + ":" + std::string(key_width - k.size() + 1, ' ') + v + "\n";
  return out;
}

void flatten(const json& obj, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [key, value] : obj.items()) {
    std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, name, out);
    } else if (value.is_array() && !value.empty() && value.front().is_object()) {
      // A list of objects (the top users): one group each, named by its uid when it has one.
      for (std::size_t i = 0; i < value.size(); ++i) {
        const json& item = value[i];
        const auto uid = item.is_object() ? item.find("uid") : item.end();
        json rest = item;
        if (rest.is_object()) rest.erase("uid");
        flatten(rest, name + "[" + (uid != item.end() ? "uid " + uid->dump() : std::to_string(i)) + "]", out);
      }
    } else {
      out.emplace_back(name, scalar(value));
    }
  }
}

struct Metric {
  const char* name;  // Prometheus name: base units, counters end in _total
  const char* type;  // counter or gauge
  const char* help;
  double to_base_unit = 1.0;  // the JSON value times this is in the name's unit (e.g. us -> s: 1e-6)
};

// Every statistic ibatd reports (by its JSON path in `ibat stats --json`), with its Prometheus
// name. fabric.sm_changes is left out: it counts the same events as sm_changes.
const std::map<std::string, Metric>& metric_catalog() {
  static const std::map<std::string, Metric> catalog = {
      {"resolves", {"ibat_resolves_total", "counter", "Resolve requests accepted."}},
      {"cache_hits", {"ibat_cache_hits_total", "counter", "Resolves answered from a valid cache entry."}},
      {"table_hits", {"ibat_table_hits_total", "counter", "Resolves clients answered from the shared path table (reported in batches)."}},
      {"stale_hits", {"ibat_cache_stale_hits_total", "counter", "Resolves answered from a stale entry while it is revalidated."}},
      {"provisional_hits", {"ibat_cache_provisional_hits_total", "counter", "Resolves answered from a provisional (ARP-built) entry."}},
      {"stale_holds", {"ibat_cache_stale_holds_total", "counter", "Resolves on a stale entry held for its fresh answer because the local LID moved."}},
      {"stale_fallbacks", {"ibat_cache_stale_fallbacks_total", "counter", "Held resolves answered with the old path: no fresh answer in time."}},
      {"misses", {"ibat_cache_misses_total", "counter", "Resolves that had to wait for an SA query."}},
      {"coalesced", {"ibat_coalesced_resolves_total", "counter", "Resolves that joined an SA query already in flight."}},
      {"sa_queries", {"ibat_sa_queries_total", "counter", "SA PathRecord queries sent, retries included."}},
      {"sa_retries", {"ibat_sa_retries_total", "counter", "SA query retries."}},
      {"sa_timeouts", {"ibat_sa_timeouts_total", "counter", "SA queries that timed out."}},
      {"sa_errors", {"ibat_sa_errors_total", "counter", "SA answers with no record or an invalid record."}},
      {"rejected_paths", {"ibat_sa_rejected_paths_total", "counter", "SA answers refused as not servable (DLID 0, bad MTU or rate)."}},
      {"revalidations", {"ibat_revalidations_total", "counter", "Revalidation queries for stale entries."}},
      {"sa_tables", {"ibat_sa_tables_total", "counter", "Subnet PathRecord GetTables sent (prefetch, revalidation after an SM or LID change)."}},
      {"sa_tables_answered", {"ibat_sa_tables_answered_total", "counter", "Subnet GetTables answered and read."}},
      {"sa_tables_failed", {"ibat_sa_tables_failed_total", "counter", "Subnet GetTables refused or unanswered: their paths asked by GET."}},
      {"sa_probes", {"ibat_sa_probes_total", "counter", "GETs probing the SA's queue before a subnet GetTable (the table goes once one finds it short)."}},
      {"sa_turns_waited_max", {"ibat_sa_turns_waited_max", "gauge", "Most SA GETs sent for other users ahead of a user's only queued GET since ibatd started: fair turns bound it by the users waiting, less one."}},
      {"table_paths", {"ibat_table_paths_total", "counter", "Cache entries a subnet GetTable filled in or refreshed."}},
      {"table_skipped", {"ibat_table_paths_skipped_total", "counter", "GetTable paths left out: the cache was full, or the path not servable."}},
      {"failures", {"ibat_resolve_failures_total", "counter", "Resolves that completed with an error, by reason."}},
      {"evictions", {"ibat_cache_evictions_total", "counter", "Idle cache entries evicted by the LRU."}},
      {"entries", {"ibat_cache_entries", "gauge", "Path cache entries."}},
      {"pending", {"ibat_pending_resolves", "gauge", "Resolve requests waiting for an answer."}},
      {"inflight", {"ibat_sa_queries_in_flight", "gauge", "SA queries in flight."}},
      {"sa_window", {"ibat_sa_window", "gauge", "SA queries the SaPacer lets be in flight now (a host's ports together)."}},
      {"sm_changes", {"ibat_sm_changes_total", "counter", "SM restarts and fail-overs seen."}},
      {"lid_changes", {"ibat_local_lid_changes_total", "counter", "Local port LID changes seen."}},
      {"neighbours", {"ibat_neighbour_entries", "gauge", "Neighbour (IP to IPoIB hardware address) entries."}},
      {"uptime_s", {"ibat_uptime_seconds", "gauge", "Seconds since ibatd started."}},
      {"fabric.mads_sent", {"ibat_mads_sent_total", "counter", "MADs sent to the SA and SM, retries included."}},
      {"fabric.mads_received", {"ibat_mads_received_total", "counter", "MADs received."}},
      {"fabric.mad_timeouts", {"ibat_mad_timeouts_total", "counter", "MAD attempts that got no answer in time (each may be retried)."}},
      {"fabric.mad_retries", {"ibat_mad_retries_total", "counter", "MADs sent again after a timeout."}},
      {"fabric.late_or_duplicate", {"ibat_mad_late_or_duplicate_total", "counter", "MAD responses that matched no outstanding request."}},
      {"fabric.invalid_responses", {"ibat_mad_invalid_responses_total", "counter", "MAD responses that failed validation and were dropped."}},
      {"fabric.reports", {"ibat_trap_reports_total", "counter", "Trap reports received from the SM."}},
      {"fabric.rejected_reports", {"ibat_trap_reports_rejected_total", "counter", "Trap reports dropped because they did not come from the SM."}},
      {"fabric.oversized_mads", {"ibat_mad_oversized_total", "counter", "Received MAD messages longer than the GetTable bound: read and dropped."}},
      {"fabric.sa_gettables_sent", {"ibat_sa_gettables_sent_total", "counter", "SA GetTables started (PathRecord and NodeRecord), retries not counted."}},
      {"fabric.sa_gettables_answered", {"ibat_sa_gettables_answered_total", "counter", "SA GetTable answers received, whatever their status."}},
      {"fabric.sa_table_records", {"ibat_sa_table_records_total", "counter", "Records in the SA GetTable answers that could be read."}},
      {"fabric.sa_table_bytes", {"ibat_sa_table_bytes_total", "counter", "Bytes of the SA GetTable answers received."}},
      {"fabric.sa_srtt_us", {"ibat_sa_srtt_seconds", "gauge", "The SA's smoothed round trip for single-MAD requests, which every MAD timer to it follows (the largest port's; 0 before an answer).", 1e-6}},
      {"fabric.sa_table_ns_per_record", {"ibat_sa_table_seconds_per_record", "gauge", "The SA's time per PathRecord of a GetTable, measured from tables answered at their first attempt, which the next table's timer follows (the largest port's; 0 before one).", 1e-9}},
      {"fabric.sa_mad_timer_floor_us", {"ibat_sa_mad_timer_floor_seconds", "gauge", "The least a MAD attempt to the SA waits now: twice the smoothed round trip, or after timeouts the backed-off timer until an answer to a first attempt, at most 10 s (the largest port's; 0 before an answer or timeout).", 1e-6}},
      {"fabric.sa_table_timer_floor_us", {"ibat_sa_table_timer_floor_seconds", "gauge", "The least an attempt of the next PathRecord GetTable waits now: twice the GETs' round trip and the last table's records at the measured time each, or after timeouts the backed-off timer, at most 60 s (the largest port's; 0 before one).", 1e-6}},
      {"server.connections", {"ibat_connections_open", "gauge", "Native protocol connections open."}},
      {"server.connections_total", {"ibat_connections_accepted_total", "counter", "Native protocol connections accepted."}},
      {"server.protocol_errors", {"ibat_protocol_errors_total", "counter", "Connections closed for a malformed frame."}},
      {"server.slow_clients", {"ibat_slow_clients_total", "counter", "Connections closed because their unread replies overflowed."}},
      {"server.cut_over_ceiling", {"ibat_cut_over_ceiling_total", "counter", "Connections (either socket) closed because they held the most unread replies when the daemon's total passed max_queued_bytes_total."}},
      {"server.cut_over_uid_share", {"ibat_cut_over_uid_share_total", "counter", "Connections (either socket) closed because they held the most of their uid's unread replies when that uid's total passed max_queued_bytes_per_uid."}},
      {"server.denied", {"ibat_denied_requests_total", "counter", "Privileged requests refused."}},
      {"server.connections_refused_per_uid", {"ibat_connections_refused_per_uid_total", "counter", "Connections (either socket) closed at once: their uid had max_connections_per_uid open."}},
      {"server.clients_pending", {"ibat_clients_pending_resolves", "gauge", "Resolve requests of socket clients (either socket) handed to a Resolver and not yet completed: what max_pending_per_uid shares out."}},
      {"server.pending_refused_per_uid", {"ibat_pending_refused_per_uid_total", "counter", "Resolve requests (either socket) answered overloaded at once: their uid had max_pending_per_uid pending."}},
      {"server.connections_refused", {"ibat_connections_refused_total", "counter", "Native protocol connections closed at once: max_connections were open."}},
      {"server.acm_requests", {"ibat_acm_requests_total", "counter", "Requests on the ACM socket."}},
      {"server.acm_connections", {"ibat_acm_connections_open", "gauge", "ACM protocol connections open."}},
      {"server.acm_connections_total", {"ibat_acm_connections_accepted_total", "counter", "ACM protocol connections accepted."}},
      {"server.acm_connections_refused", {"ibat_acm_connections_refused_total", "counter", "ACM protocol connections closed at once: max_connections were open."}},
      {"server.acm_slow_clients", {"ibat_acm_slow_clients_total", "counter", "ACM connections closed because their unread replies overflowed."}},
      {"server.acm_errors", {"ibat_acm_errors_total", "counter", "ACM requests answered with an error status."}},
      {"server.acm_protocol_errors", {"ibat_acm_protocol_errors_total", "counter", "ACM connections closed for a broken message."}},
      {"busy_poll.spells", {"ibat_busy_poll_spells_total", "counter", "Times the event loop polled instead of sleeping after a reply to a client that asks again at once."}},
      {"busy_poll.caught", {"ibat_busy_poll_caught_total", "counter", "Polling spells that ended with work arriving (a wake-up saved)."}},
      {"busy_poll.polled_s", {"ibat_busy_poll_seconds_total", "counter", "Time the event loop spent polling with nothing to do: the CPU busy_poll_us cost."}},
      {"busy_poll.crowded_stops", {"ibat_busy_poll_crowded_stops_total", "counter", "Times polling stopped because the host had more runnable tasks than CPUs."}},
  };
  return catalog;
}

// A label value with the exposition format's escapes.
std::string label_value(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// One series of `m` (a number, or an object of counts by reason); `labels` is "" or
// `device="mlx5_0",port="1"`.
void prometheus_series(std::ostringstream& out, const Metric& m, const json& value, const std::string& labels) {
  if (value.is_object()) {
    for (const auto& [label, v] : value.items())
      if (label != "total" && v.is_number())
        out << m.name << "{" << labels << (labels.empty() ? "" : ",") << "reason=\"" << label_value(label) << "\"} "
            << v.dump() << "\n";
  } else if (value.is_number()) {
    out << m.name << (labels.empty() ? "" : "{" + labels + "}") << " ";
    if (m.to_base_unit == 1.0) {
      out << value.dump() << "\n";
    } else {
      char scaled[32];
      std::snprintf(scaled, sizeof scaled, "%.9g", value.get<double>() * m.to_base_unit);
      out << scaled << "\n";
    }
  }
}

void prometheus_help(std::ostringstream& out, const Metric& m) {
  out << "# HELP " << m.name << " " << m.help << "\n# TYPE " << m.name << " " << m.type << "\n";
}

// The ports of a multi-port ibatd (stats "ports") that carry a device name.
std::vector<const json*> named_ports(const json& stats) {
  std::vector<const json*> out;
  auto ports = stats.find("ports");
  if (ports == stats.end() || !ports->is_array()) return out;
  for (const json& p : *ports)
    if (p.is_object() && p.contains("device") && p["device"].is_string() && !p["device"].get<std::string>().empty())
      out.push_back(&p);
  return out;
}

}  // namespace

std::string_view state_name(std::uint32_t state) {
  switch (state) {
    case IBAT_STATE_VALID: return "valid";
    case IBAT_STATE_STALE: return "stale";
    case IBAT_STATE_PROVISIONAL: return "provisional";
    default: return "unknown";
  }
}

namespace {

std::uint64_t record_u64(const ibat_path& p, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t k = 0; k < 8; ++k) v = v << 8 | p.record[at + k];
  return v;
}
std::uint32_t record_u16(const ibat_path& p, std::size_t at) {
  return static_cast<std::uint32_t>(p.record[at] << 8 | p.record[at + 1]);
}
bool reversible(const ibat_path& p) { return p.record[49] & 0x80; }

std::string hex_text(std::uint64_t v, int width = 0) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

std::string rate_of(const ibat_path& p) {
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g Gb/s", ibat_rate_gbps(p.rate));
  return rate;
}

// What the source of a path is, in words.
std::string_view origin_words(std::uint32_t origin) {
  switch (origin) {
    case IBAT_ORIGIN_SA_TABLE: return "the subnet's PathRecord GetTable";
    case IBAT_ORIGIN_SA_GET: return "a single PathRecord GET";
    case IBAT_ORIGIN_WARM_CACHE: return "the warm cache file read at ibatd's start";
    case IBAT_ORIGIN_NEIGHBOUR: return "built from ARP / neighbour data (provisional)";
    default: return "not reported by this ibatd";
  }
}

json key_json(const ibat_path& p, const ibat_path_explain& e) {
  json key{{"sgid", gid_text(p.sgid)}, {"dgid", gid_text(p.dgid)}, {"pkey", pkey_text(p.pkey)}};
  if (e.key_fields & IBAT_KEY_SERVICE_ID) key["service_id"] = hex_text(e.key_service_id);
  if (e.key_fields & IBAT_KEY_QOS_CLASS) key["qos_class"] = e.key_qos_class;
  return key;
}

std::string key_text(const ibat_path& p, const ibat_path_explain& e) {
  std::string out = "P_Key " + pkey_text(p.pkey);
  if (e.key_fields & IBAT_KEY_SERVICE_ID) out += ", ServiceID " + hex_text(e.key_service_id);
  if (e.key_fields & IBAT_KEY_QOS_CLASS) out += ", QoS class " + std::to_string(e.key_qos_class);
  if (e.key_fields == 0) out += ", the destination's default path (no ServiceID or QoS class)";
  return out;
}

std::string asked_text(const ResolveContext& c) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (c.service_id) add("ServiceID " + hex_text(*c.service_id));
  if (c.qos_class) add("QoS class " + std::to_string(*c.qos_class));
  if (c.tclass) add("TClass " + std::to_string(*c.tclass));
  return out;
}

}  // namespace

std::string_view origin_name(std::uint32_t origin) {
  switch (origin) {
    case IBAT_ORIGIN_SA_TABLE: return "sa-table";
    case IBAT_ORIGIN_SA_GET: return "sa-get";
    case IBAT_ORIGIN_WARM_CACHE: return "warm-cache";
    case IBAT_ORIGIN_NEIGHBOUR: return "neighbour";
    default: return "unknown";
  }
}

json path_json(const ibat_path& p, const ResolveContext& c) {
  json out{{"dgid", gid_text(p.dgid)},   {"sgid", gid_text(p.sgid)},
           {"dlid", p.dlid},             {"slid", p.slid},
           {"sl", p.sl},                 {"mtu", ibat_mtu_bytes(p.mtu)},
           {"rate", ibat_rate_gbps(p.rate)}, {"pkt_life", p.pkt_life},
           {"pkey", pkey_text(p.pkey)},  {"hop_limit", p.hop_limit},
           {"flow_label", p.flow_label}, {"tclass", p.tclass},
           {"reversible", reversible(p)}, {"state", state_name(p.state)},
           {"age_ms", p.age_ms}};
  if (c.service_id || c.qos_class || c.tclass) {
    json asked = json::object();
    if (c.service_id) asked["service_id"] = hex_text(*c.service_id);
    if (c.qos_class) asked["qos_class"] = *c.qos_class;
    if (c.tclass) asked["tclass"] = *c.tclass;
    out["asked"] = std::move(asked);
  }
  if (c.explain)
    out["origin"] = json{{"source", origin_name(c.explain->origin)}, {"age_ms", p.age_ms}, {"key", key_json(p, *c.explain)}};
  return out;
}

std::string path_text(const ibat_path& p, const ResolveContext& c) {
  std::vector<std::pair<std::string, std::string>> items = {
      {"dgid", gid_text(p.dgid)},
      {"sgid", gid_text(p.sgid)},
      {"dlid", std::to_string(p.dlid)},
      {"slid", std::to_string(p.slid)},
      {"sl", std::to_string(p.sl)},
      {"mtu", std::to_string(ibat_mtu_bytes(p.mtu))},
      {"rate", rate_of(p)},
      {"pkt_life", std::to_string(p.pkt_life)},
      {"pkey", pkey_text(p.pkey)},
      {"hop_limit", std::to_string(p.hop_limit)},
      {"flow_label", hex_text(p.flow_label, 5)},
      {"tclass", std::to_string(p.tclass)},
      {"reversible", reversible(p) ? "yes" : "no"},
      {"state", std::string(state_name(p.state))},
      {"age", std::to_string(p.age_ms) + " ms"}};
  if (std::string asked = asked_text(c); !asked.empty()) items.emplace_back("asked", asked);
  if (c.explain) {
    items.emplace_back("origin", std::string(origin_name(c.explain->origin)) + ": " +
                                     std::string(origin_words(c.explain->origin)) + ", " + std::to_string(p.age_ms) +
                                     " ms ago");
    items.emplace_back("cache key", key_text(p, *c.explain));
  }
  return key_values(items, "");
}

std::vector<std::pair<std::string, std::string>> path_fields(const ibat_path& p) {
  const std::uint32_t flow_word = static_cast<std::uint32_t>(record_u16(p, 44) << 16 | record_u16(p, 46));
  return {{"service_id", hex_text(record_u64(p, 0))},
          {"dgid", gid_text(p.dgid)},
          {"sgid", gid_text(p.sgid)},
          {"dlid", std::to_string(p.dlid)},
          {"slid", std::to_string(p.slid)},
          {"raw_traffic", (flow_word >> 31) ? "yes" : "no"},
          {"flow_label", hex_text(p.flow_label, 5)},
          {"hop_limit", std::to_string(p.hop_limit)},
          {"tclass", std::to_string(p.tclass)},
          {"reversible", reversible(p) ? "yes" : "no"},
          {"numb_path", std::to_string(p.record[49] & 0x7F)},
          {"pkey", pkey_text(p.pkey)},
          {"qos_class", std::to_string(record_u16(p, 52) >> 4)},
          {"sl", std::to_string(p.sl)},
          {"mtu", std::to_string(ibat_mtu_bytes(p.mtu))},
          {"rate", rate_of(p)},
          {"pkt_life", std::to_string(p.pkt_life)},
          {"preference", std::to_string(p.record[57])}};
}

std::vector<std::string> differing_fields(const ibat_path& cached, const ibat_path& fresh) {
  std::vector<std::string> out;
  auto a = path_fields(cached), b = path_fields(fresh);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].second != b[i].second) out.push_back(a[i].first);
  return out;
}

json verify_json(const ibat_path& cached, const ResolveContext& cached_context, const ibat_path& fresh,
                 const ResolveContext& fresh_context) {
  const std::vector<std::string> differ = differing_fields(cached, fresh);
  json fields = json::object();
  auto a = path_fields(cached), b = path_fields(fresh);
  for (std::size_t i = 0; i < a.size(); ++i) fields[a[i].first] = {{"cached", a[i].second}, {"sa", b[i].second}};
  return json{{"cached", path_json(cached, cached_context)},
              {"sa", path_json(fresh, fresh_context)},
              {"fields", std::move(fields)},
              {"agree", differ.empty()},
              {"differ", differ}};
}

std::string verify_text(const ibat_path& cached, const ResolveContext& cached_context, const ibat_path& fresh) {
  std::vector<std::vector<std::string>> rows;
  auto a = path_fields(cached), b = path_fields(fresh);
  for (std::size_t i = 0; i < a.size(); ++i)
    rows.push_back({a[i].first, a[i].second, b[i].second, a[i].second == b[i].second ? "" : "DIFFERS"});
  std::string out = table({"FIELD", "CACHED", "SA", ""}, rows);
  // No trailing blanks on rows that agree (the last column is empty).
  std::string trimmed;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    trimmed += line + "\n";
  }
  std::vector<std::pair<std::string, std::string>> items;
  items.emplace_back("cached", std::string(state_name(cached.state)) + ", " + std::to_string(cached.age_ms) + " ms old");
  if (cached_context.explain)
    items.emplace_back("origin", std::string(origin_name(cached_context.explain->origin)) + ": " +
                                     std::string(origin_words(cached_context.explain->origin)) + "; cache key " +
                                     key_text(cached, *cached_context.explain));
  if (std::string asked = asked_text(cached_context); !asked.empty()) items.emplace_back("asked", asked);
  const std::vector<std::string> differ = differing_fields(cached, fresh);
  std::string verdict = "yes: the cached path is the SA's answer";
  if (!differ.empty()) {
    verdict = "no: ";
    for (std::size_t i = 0; i < differ.size(); ++i) verdict += (i ? ", " : "") + differ[i];
    verdict += " differ";
  }
  items.emplace_back("agree", verdict);
  return trimmed + key_values(items, "");
}

std::string config_text(const json& config) {
  std::string out = "# ibatd's running configuration (after reloads); '# restart' marks keys a reload does not change\n";
  std::string section = "\x01";
  for (const json& item : config) {
    if (!item.is_object()) continue;
    std::string key = item.value("key", "");
    std::string value = item.value("value", "");
    std::string here;
    if (auto dot = key.rfind('.'); dot != std::string::npos) {
      here = key.substr(0, dot);
      key = key.substr(dot + 1);
    }
    if (here != section) {
      if (!here.empty()) out += "\n[" + here + "]\n";
      section = here;
    }
    out += key + " = " + value + (item.value("reloadable", true) ? "" : "  # restart") + "\n";
  }
  return out;
}

json error_json(int exit_code, const std::string& message) {
  return json{{"error", {{"code", exit_code}, {"message", message}}}};
}

// "40 Gb/s" as resolve prints it ("-" when absent).
std::string rate_text(const json& obj) {
  auto it = obj.find("rate");
  if (it == obj.end() || !it->is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g Gb/s", it->get<double>());
  return buf;
}

// A QPN in hex, as the IB tools print it ("-" when absent).
std::string qpn_text(const json& obj) {
  auto it = obj.find("qpn");
  if (it == obj.end() || !it->is_number_unsigned()) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", it->get<unsigned>());
  return buf;
}

// What a path is kept apart for: "sid 0x1060cbc", "class 4", both, or "-" (the default path).
std::string qos_text(const json& entry) {
  std::string out;
  if (entry.contains("service_id")) out = "sid " + field(entry, "service_id");
  if (entry.contains("qos_class")) out += (out.empty() ? "class " : ",class ") + field(entry, "qos_class");
  return out.empty() ? "-" : out;
}

std::string paths_table(const json& entries) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : entries) {
    rows.push_back({field(e, "dgid"), field(e, "sgid"), field(e, "pkey"), qos_text(e), field(e, "state"), field(e, "dlid"),
                    field(e, "slid"), field(e, "sl"), field(e, "mtu"), rate_text(e), field(e, "origin"),
                    field(e, "age_ms"), field(e, "idle_ms"), field(e, "last_error")});
  }
  return table({"DGID", "SGID", "PKEY", "QOS", "STATE", "DLID", "SLID", "SL", "MTU", "RATE", "ORIGIN", "AGE_MS",
                "IDLE_MS", "LAST_ERROR"},
               rows);
}

std::string neighbours_table(const json& neighbours) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : neighbours)
    rows.push_back({field(n, "ip"), field(n, "gid"), qpn_text(n), field(n, "slid"), field(n, "hw")});
  return table({"IP", "GID", "QPN", "SLID", "HWADDR"}, rows);
}

std::string stats_text(const json& stats) {
  std::vector<std::pair<std::string, std::string>> items;
  json totals = stats;
  totals.erase("ports");   // `ibat ports` shows them
  totals.erase("config");  // `ibat config` shows it
  flatten(totals, "", items);
  if (auto ports = stats.find("ports"); ports != stats.end() && ports->is_array())
    items.emplace_back("ports", std::to_string(ports->size()) + " (ibat ports: one line each)");
  return key_values(items, "");
}

std::string ports_table(const json& stats) {
  std::vector<std::vector<std::string>> rows;
  auto ports = stats.find("ports");
  if (ports != stats.end() && ports->is_array()) {
    for (const json& p : *ports) {
      rows.push_back({field(p, "name"), field(p, "state"), field(p, "gid"), field(p, "lid"), field(p, "sm_lid"),
                      field(p, "subnet_prefix"), field(p, "entries"), field(p, "sa_queries"), field(p, "sa_window"),
                      p.value("default", false) ? "yes" : ""});
    }
  }
  return table({"PORT", "STATE", "GID", "LID", "SM_LID", "SUBNET", "ENTRIES", "SA_QUERIES", "SA_WINDOW", "DEFAULT"},
               rows);
}

std::string stats_prometheus(const json& stats) {
  std::ostringstream out;
  auto version = stats.find("version");
  std::string shown = version != stats.end() && version->is_string() ? version->get<std::string>() : "unknown";
  out << "# HELP ibat_build_info The running ibatd's version.\n# TYPE ibat_build_info gauge\n"
      << "ibat_build_info{version=\"" << label_value(shown) << "\"} 1\n";
  // Known statistics only, sorted by JSON path: one HELP and TYPE per family, no name twice. A
  // statistic of a newer ibatd appears once this ibat knows its name and meaning.
  // A port's statistics are series labelled device and port (node_exporter's InfiniBand labels):
  // sum() over them is the host's total. What belongs to the host (sockets, uptime) has no labels.
  const std::vector<const json*> ports = named_ports(stats);
  for (const auto& [path, metric] : metric_catalog()) {
    std::string pointer = "/" + path;  // "fabric.mads_sent" -> "/fabric/mads_sent"
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    json::json_pointer at(pointer);
    const bool per_port = !ports.empty() && ports.front()->contains(at);
    if (per_port) {
      prometheus_help(out, metric);
      for (const json* p : ports) {
        const std::string labels = "device=\"" + label_value((*p)["device"].get<std::string>()) + "\",port=\"" +
                                   (*p)["port"].dump() + "\"";
        if (p->contains(at)) prometheus_series(out, metric, p->at(at), labels);
      }
      continue;
    }
    if (!stats.contains(at)) continue;
    const json& value = stats.at(at);
    if (!value.is_number() && !value.is_object()) continue;
    prometheus_help(out, metric);
    prometheus_series(out, metric, value, "");
  }
  // The users who asked the most (stats "server.users"): series labelled uid, the rest summed in
  // uid="other". Which uids appear can change between scrapes; their count is bounded by ibatd.
  const json::json_pointer users_at("/server/users");
  if (stats.contains(users_at) && stats.at(users_at).is_object()) {
    const json& users = stats.at(users_at);
    const Metric per_user[] = {
        {"ibat_user_resolves_total", "counter", "Resolve requests (either socket) of this uid handed to a Resolver; only the uids that asked the most, the rest as uid=\"other\"."},
        {"ibat_user_resolves_refused_total", "counter", "Resolve requests of this uid answered overloaded at once: it had max_pending_per_uid pending."},
        {"ibat_user_pending_resolves", "gauge", "Resolve requests of this uid handed to a Resolver and not yet completed."},
        {"ibat_user_connections_open", "gauge", "Connections (either socket) of this uid open."},
        {"ibat_user_connections_refused_total", "counter", "Connections of this uid closed at once: it had max_connections_per_uid open."},
    };
    const char* fields[] = {"resolves", "resolves_refused", "pending", "connections", "connections_refused"};
    for (std::size_t i = 0; i < std::size(fields); ++i) {
      prometheus_help(out, per_user[i]);
      if (auto top = users.find("top"); top != users.end() && top->is_array())
        for (const json& u : *top)
          if (u.contains("uid") && u.contains(fields[i]))
            prometheus_series(out, per_user[i], u[fields[i]], "uid=\"" + u["uid"].dump() + "\"");
      if (auto others = users.find("others"); others != users.end() && others->contains(fields[i]))
        prometheus_series(out, per_user[i], (*others)[fields[i]], "uid=\"other\"");
    }
  }
  // Each port's state and its SA's silence, for alerts (a port not active, an SA not answering):
  // `ibat health` judges by the same two fields.
  if (!ports.empty()) {
    const Metric active{"ibat_port_active", "gauge", "1 while the port is active, 0 while it is down or its link is down."};
    const Metric silent{"ibat_sa_silent_seconds", "gauge",
                        "Seconds since the port's SA stopped answering; 0 while it answers."};
    auto labels_of = [](const json& p) {
      return "device=\"" + label_value(p["device"].get<std::string>()) + "\",port=\"" + p["port"].dump() + "\"";
    };
    prometheus_help(out, active);
    for (const json* p : ports)
      prometheus_series(out, active, json(p->value("state", "") == "active" ? 1 : 0), labels_of(*p));
    prometheus_help(out, silent);
    for (const json* p : ports) {
      auto s = p->find("sa_silent_s");
      prometheus_series(out, silent, s != p->end() && s->is_number() ? *s : json(0), labels_of(*p));
    }
  }
  return out.str();
}

std::string event_text(const json& event) {
  std::string out;
  auto time = event.find("time_ms");
  if (time != event.end() && time->is_number_integer()) {
    std::time_t secs = static_cast<std::time_t>(time->get<std::int64_t>() / 1000);
    std::tm tm{};
    ::localtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char ms[8];
    std::snprintf(ms, sizeof ms, ".%03d", static_cast<int>(time->get<std::int64_t>() % 1000));
    out = std::string(buf) + ms + " ";
  }
  out += field(event, "event");
  for (const auto& [key, value] : event.items())
    if (key != "event" && key != "time_ms") out += " " + key + "=" + (value.is_object() || value.is_array() ? value.dump() : scalar(value));
  return out;
}

}  // namespace ibat::cli
