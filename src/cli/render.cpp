// Text and JSON renderings of the CLI (see render.h).
#include "cli/render.h"

#include <algorithm>
#include <cctype>
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
    if (value.is_object()) flatten(value, name, out);
    else out.emplace_back(name, scalar(value));
  }
}

struct MetricInfo {
  const char* type;
  const char* help;
};

// Known counters and gauges; anything else ibatd reports is exported as untyped.
const std::map<std::string, MetricInfo>& metric_catalog() {
  static const std::map<std::string, MetricInfo> catalog = {
      {"resolves", {"counter", "Resolve requests accepted."}},
      {"cache_hits", {"counter", "Resolves answered from a valid cache entry."}},
      {"stale_hits", {"counter", "Resolves answered from a stale entry while it is revalidated."}},
      {"provisional_hits", {"counter", "Resolves answered from a provisional (ARP-built) entry."}},
      {"misses", {"counter", "Resolves that had to wait for an SA query."}},
      {"coalesced", {"counter", "Resolves that joined an SA query already in flight."}},
      {"sa_queries", {"counter", "SA PathRecord queries sent, retries included."}},
      {"sa_retries", {"counter", "SA query retries."}},
      {"sa_timeouts", {"counter", "SA queries that timed out."}},
      {"sa_errors", {"counter", "SA answers with no record or an invalid record."}},
      {"rejected_paths", {"counter", "SA answers refused as not servable (DLID 0, bad MTU or rate)."}},
      {"revalidations", {"counter", "Revalidation queries for stale entries."}},
      {"failures", {"counter", "Resolves that completed with an error, by reason."}},
      {"evictions", {"counter", "Idle cache entries evicted by the LRU."}},
      {"entries", {"gauge", "Path cache entries."}},
      {"pending", {"gauge", "Resolve requests waiting."}},
      {"inflight", {"gauge", "SA queries in flight."}},
      {"sm_changes", {"counter", "SM restarts and fail-overs seen."}},
      {"lid_changes", {"counter", "Local LID changes seen."}},
      {"neighbours", {"gauge", "Neighbour (IP to hardware address) entries."}},
      {"uptime_s", {"gauge", "Seconds since ibatd started."}},
      {"server.connections", {"gauge", "Native protocol connections open."}},
      {"server.acm_connections", {"gauge", "ACM protocol connections open."}},
  };
  return catalog;
}

std::string metric_name(const std::string& path) {
  std::string name = "ibat_";
  for (char c : path) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

// Known metrics come from the catalog; other entries of a section (fabric, server) are counters,
// other top-level numbers untyped.
void prometheus_metric(std::ostringstream& out, const std::string& path, const json& value) {
  const auto& catalog = metric_catalog();
  auto known = catalog.find(path);
  std::string type = "untyped";
  std::string help = "ibatd statistic '" + path + "'.";
  if (known != catalog.end()) {
    type = known->second.type;
    help = known->second.help;
  } else if (path.find('.') != std::string::npos) {
    type = "counter";
  }
  std::string name = metric_name(path);
  if (type == "counter" && !name.ends_with("_total")) name += "_total";
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  if (value.is_object()) {
    for (const auto& [label, v] : value.items())
      if (label != "total" && v.is_number()) out << name << "{reason=\"" << label << "\"} " << v.dump() << "\n";
  } else {
    out << name << " " << value.dump() << "\n";
  }
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

json path_json(const ibat_path& p) {
  return json{{"dgid", gid_text(p.dgid)},   {"sgid", gid_text(p.sgid)},
              {"dlid", p.dlid},             {"slid", p.slid},
              {"sl", p.sl},                 {"mtu", ibat_mtu_bytes(p.mtu)},
              {"rate", ibat_rate_gbps(p.rate)}, {"pkt_life", p.pkt_life},
              {"pkey", pkey_text(p.pkey)},  {"state", state_name(p.state)},
              {"age_ms", p.age_ms}};
}

std::string path_text(const ibat_path& p) {
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g Gb/s", ibat_rate_gbps(p.rate));
  return key_values({{"dgid", gid_text(p.dgid)},
                     {"sgid", gid_text(p.sgid)},
                     {"dlid", std::to_string(p.dlid)},
                     {"slid", std::to_string(p.slid)},
                     {"sl", std::to_string(p.sl)},
                     {"mtu", std::to_string(ibat_mtu_bytes(p.mtu))},
                     {"rate", rate},
                     {"pkt_life", std::to_string(p.pkt_life)},
                     {"pkey", pkey_text(p.pkey)},
                     {"state", std::string(state_name(p.state))},
                     {"age", std::to_string(p.age_ms) + " ms"}},
                    "");
}

std::string paths_table(const json& entries) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : entries) {
    std::string rate = field(e, "rate");
    rows.push_back({field(e, "dgid"), field(e, "pkey"), field(e, "state"), field(e, "dlid"), field(e, "slid"),
                    field(e, "sl"), field(e, "mtu"), rate, field(e, "age_ms"), field(e, "idle_ms"),
                    field(e, "last_error")});
  }
  return table({"DGID", "PKEY", "STATE", "DLID", "SLID", "SL", "MTU", "RATE", "AGE_MS", "IDLE_MS", "LAST_ERROR"},
               rows);
}

std::string neighbours_table(const json& neighbours) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& n : neighbours)
    rows.push_back({field(n, "ip"), field(n, "gid"), field(n, "qpn"), field(n, "slid"), field(n, "hw")});
  return table({"IP", "GID", "QPN", "SLID", "HWADDR"}, rows);
}

std::string stats_text(const json& stats) {
  std::vector<std::pair<std::string, std::string>> items;
  flatten(stats, "", items);
  return key_values(items, "");
}

std::string stats_prometheus(const json& stats) {
  std::ostringstream out;
  for (const auto& [key, value] : stats.items()) {
    if (key == "failures" || !value.is_object()) {
      if (value.is_number() || value.is_object()) prometheus_metric(out, key, value);
      continue;
    }
    for (const auto& [sub, v] : value.items())
      if (v.is_number()) prometheus_metric(out, key + "." + sub, v);
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
