// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Output of the ibat CLI: a resolved path as "key: value" lines or a JSON object, cache entries and
// neighbours as aligned columns, counters as text or Prometheus exposition, events one per line.
// Pure functions from data to text, so they are unit-testable.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ibat.h"

namespace ibat::cli {

// The JSON object of `ibat resolve --json`: dgid, sgid, dlid, slid, sl, mtu (bytes), rate (Gb/s),
// pkt_life, pkey, state, age_ms.
nlohmann::json path_json(const ibat_path& path);
std::string path_text(const ibat_path& path);

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
