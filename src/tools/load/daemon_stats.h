// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: a few counters of a daemon (STATS listing) read before and after a run, to report
// SA load and cache state per run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ibat::load {

// {sa_queries, entries, cache_hits, stale_hits, misses, connections} of the daemon on `socket`
// (over a short connection of its own, counted in `connections`), or null if it cannot be asked.
nlohmann::json daemon_counters(const std::string& socket);

// The daemon's SA queries between two daemon_counters() readings; a daemon restarted in between
// counts from zero again, so then its whole count is this run's. nullopt if either is unknown.
std::optional<std::uint64_t> sa_queries_between(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace ibat::load
