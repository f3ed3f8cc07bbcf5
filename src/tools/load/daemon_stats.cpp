// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: daemon counters from the STATS listing, over a short-lived connection of their own.
#include "tools/load/daemon_stats.h"

#include "ibat.h"

namespace ibat::load {

nlohmann::json daemon_counters(const std::string& socket) {
  ibat_t* h = nullptr;
  if (ibat_open(socket.c_str(), &h) != IBAT_OK) return nullptr;
  char* text = nullptr;
  int rc = ibat_query_json(h, IBAT_LIST_STATS, &text);
  ibat_close(h);
  if (rc != IBAT_OK) return nullptr;
  auto stats = nlohmann::json::parse(text, nullptr, false);
  ibat_free(text);
  if (!stats.is_object()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"sa_queries", "entries", "cache_hits", "stale_hits", "misses"})
    if (stats.contains(key)) out[key] = stats[key];
  if (stats.contains("server") && stats["server"].contains("connections"))
    out["connections"] = stats["server"]["connections"];
  return out;
}

std::optional<std::uint64_t> sa_queries_between(const nlohmann::json& before, const nlohmann::json& after) {
  if (!after.is_object() || !after.contains("sa_queries")) return std::nullopt;
  auto end = after["sa_queries"].get<std::uint64_t>();
  if (!before.is_object() || !before.contains("sa_queries")) return end;
  auto start = before["sa_queries"].get<std::uint64_t>();
  return start <= end ? end - start : end;
}

}  // namespace ibat::load
