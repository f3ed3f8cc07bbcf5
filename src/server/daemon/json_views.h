// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// JSON bodies of the administrative operations (docs/protocol.md "JSON bodies"): STATS (core and
// fabric counters merged), PATHS, NEIGH_LIST, and WATCH events.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/resolver.h"
#include "core/stats.h"
#include "fabric/fabric_options.h"
#include "server/daemon/pending_shares.h"
#include "server/daemon/user_counters.h"

namespace ibat::server {

// Counters of one socket (native or ACM).
struct SocketCounters {
  std::uint64_t connections = 0;        // gauge: connections open
  std::uint64_t connections_total = 0;  // accepted since start
  std::uint64_t refused = 0;            // closed at once: max_connections were open
  std::uint64_t refused_per_uid = 0;    // closed at once: its uid had max_connections_per_uid open
  std::uint64_t pending = 0;            // gauge: its requests handed to a Resolver, not yet completed
  std::uint64_t pending_refused_per_uid = 0;  // requests answered `overloaded` at once: their uid
                                              // had max_pending_per_uid pending on both sockets
  std::uint64_t slow_clients = 0;       // closed because their reply queue overflowed
  std::uint64_t reads = 0;               // socket reads that brought bytes (one batch of frames each)
  std::uint64_t writes = 0;              // socket writes started (one batch of replies each)
  std::uint64_t cut_over_ceiling = 0;    // closed: held the most unread replies when the daemon's
                                         // total passed server.max_queued_bytes_total
  std::uint64_t cut_over_uid_share = 0;  // closed: held the most of its uid's unread replies when
                                         // the uid's total passed server.max_queued_bytes_per_uid
};

// Counters of the daemon's sockets, reported with the core and fabric ones.
struct ServerCounters {
  SocketCounters native;
  SocketCounters acm;
  std::uint64_t protocol_errors = 0;  // native connections closed for a malformed frame
  std::uint64_t denied = 0;           // privileged requests refused
  std::uint64_t acm_requests = 0;
  std::uint64_t table_hits = 0;          // resolves clients answered from the shared table (reported)
  std::uint64_t acm_errors = 0;           // ACM requests answered with a status other than success
  std::uint64_t acm_protocol_errors = 0;  // ACM connections closed for a broken message
};

// Core counters at the top level (resolves, cache_hits, ..., failures as {reason: n, total: n}),
// the fabric's under "fabric", the sockets' under "server" (the ACM socket's prefixed "acm_"),
// "uptime_s" and ibatd's "version".
nlohmann::json stats_json(const core::Stats& core, const fabric::FabricStats& fabric,
                          const ServerCounters& server, std::chrono::seconds uptime);

// The users who asked the most ("top": uid, resolves, resolves_refused, pending, connections,
// connections_refused, most resolves asked first) and every other uid summed ("others", with
// "uids": how many tracked ones it sums; untracked uids past UserCounters::kTrackedUids add to it).
nlohmann::json users_json(const UserCounters::Top& top, const PendingShares& pending);

// One object per cache entry: sgid, dgid, pkey, state, and when a path is known dlid, slid, sl,
// mtu (bytes), rate (Gb/s), pkt_life, age_ms, idle_ms; last_error when not ok.
nlohmann::json paths_json(const std::vector<core::CacheEntryView>& entries);

// One object per neighbour: ip, hw, gid, qpn, slid (null when unknown).
nlohmann::json neighbours_json(const std::vector<core::Resolver::NeighbourView>& neighbours);

// {"event": name, "time_ms": unix ms} plus `fields`.
nlohmann::json event_json(std::string_view name, nlohmann::json fields = nlohmann::json::object());

}  // namespace ibat::server
