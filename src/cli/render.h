// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Output of the ibat CLI: a resolved path as "key: value" lines or a JSON object, cache entries and
// neighbours as aligned columns, counters as text or Prometheus exposition, events one per line.
// Pure functions from data to text, so they are unit-testable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibat.h"

namespace ibat::cli {

// What `ibat resolve` knows beside the path: what it asked with (echoed), and where ibatd's path
// came from (explain: null when not known).
struct ResolveContext {
  std::optional<std::uint64_t> service_id;
  std::optional<std::uint16_t> qos_class;
  std::optional<std::uint8_t> tclass;
  const ibat_path_explain* explain = nullptr;
};

// The JSON object of `ibat resolve --json`: dgid, sgid, dlid, slid, sl, mtu (bytes), rate (Gb/s),
// pkt_life, pkey, hop_limit, flow_label, tclass, reversible, state, age_ms; "asked" (service_id,
// qos_class, tclass: when given) and "origin" {"source", "age_ms", "key": {sgid, dgid, pkey,
// service_id, qos_class}} when known.
nlohmann::json path_json(const ibat_path& path, const ResolveContext& context = {});
std::string path_text(const ibat_path& path, const ResolveContext& context = {});

// Every PathRecord field of a path (from its wire record), as `ibat resolve --verify` compares them.
std::vector<std::pair<std::string, std::string>> path_fields(const ibat_path& path);
// The fields whose values differ between two paths; empty: they agree.
std::vector<std::string> differing_fields(const ibat_path& cached, const ibat_path& fresh);
// `ibat resolve --verify`: both answers field by field and whether they agree.
nlohmann::json verify_json(const ibat_path& cached, const ResolveContext& cached_context, const ibat_path& fresh,
                           const ResolveContext& fresh_context);
std::string verify_text(const ibat_path& cached, const ResolveContext& cached_context, const ibat_path& fresh);

// "sa-table", "sa-get", "warm-cache", "neighbour", "unknown".
std::string_view origin_name(std::uint32_t origin);

// `ibat config`: the "config" array of the stats (key, value as TOML, reloadable) as a TOML file.
std::string config_text(const nlohmann::json& config);

// The error object printed under --json: {"error": {"code": exit code, "message": text}}.
nlohmann::json error_json(int exit_code, const std::string& message);

// Columns for the arrays ibatd returns for PATHS and NEIGH_LIST (docs/protocol.md "JSON bodies").
std::string paths_table(const nlohmann::json& entries);
std::string neighbours_table(const nlohmann::json& neighbours);

// Every counter as aligned "name: value" lines; nested objects as "section.name".
std::string stats_text(const nlohmann::json& stats);
// `ibat ports`: one line per port of the stats' "ports" array.
std::string ports_table(const nlohmann::json& stats);
// Prometheus text exposition format (HELP and TYPE lines, metric names ibat_*).
std::string stats_prometheus(const nlohmann::json& stats);

// "time event key=value ..." for a WATCH event object.
std::string event_text(const nlohmann::json& event);

std::string_view state_name(std::uint32_t state);

}  // namespace ibat::cli
