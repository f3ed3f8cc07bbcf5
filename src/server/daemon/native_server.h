// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The native protocol server (docs/protocol.md) on the shared socket skeleton (socket_server.h):
// pipelined requests answered out of order, the per-connection cap on outstanding requests and
// the peer uid's share of pending ones (pending_shares.h), peer-credential checks for the
// privileged operations, WATCH event streams. Runs on the event loop thread that owns the Resolver.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "core/resolver.h"
#include "protocol/messages.h"
#include "server/daemon/batch_clock.h"
#include "server/daemon/json_views.h"
#include "server/daemon/peer_credentials.h"
#include "server/daemon/port_router.h"
#include "server/daemon/socket_server.h"

namespace ibat::server {

struct NativeLimits {
  std::uint32_t max_connections = 1024;
  std::uint32_t max_outstanding_per_connection = 1024;
  std::uint32_t max_queued_bytes_per_connection = 4u << 20;
  std::uint32_t max_connections_per_uid = 512;
};

// What the server needs from its owner besides the Resolver's gate.
struct NativeHooks {
  std::function<std::string()> stats_json;               // body of a STATS reply
  std::function<bool(const PeerCredentials&)> may_administer;  // NEIGH_ADD/DEL, FLUSH
  std::function<void()> after_flush;                     // a FLUSH changed the cache
  std::function<void(const protocol::TableHits&)> table_hits;  // a client's shared-table hits
  BatchClock* clock = nullptr;  // the Resolver's clock: held still for the frames of one read
};

class NativeConnection;

class NativeServer {
 public:
  NativeServer(asio::io_context& loop, PortRouter& router, NativeHooks hooks, ServerCounters& counters);
  ~NativeServer();
  NativeServer(const NativeServer&) = delete;
  NativeServer& operator=(const NativeServer&) = delete;

  // Binds `path` (replacing a stale socket file, refusing a live one), sets `mode` on it and
  // starts accepting. Throws std::runtime_error naming the path on failure.
  void listen(const std::string& path, std::uint32_t mode, const NativeLimits& limits);
  void set_limits(const NativeLimits& limits);
  void set_users(const SharedUsers& users) { sockets_.set_users(users); }

  // Sends `event` to every WATCH stream.
  void publish(const nlohmann::json& event);

  // Stops accepting and removes the socket file; every connection flushes what it has queued
  // (e.g. `cancelled` replies) and closes. `done` runs once all are closed.
  void drain(std::function<void()> done) { sockets_.drain(std::move(done)); }
  // Closes everything at once; requests still in flight are cancelled without a reply.
  void abort_all() { sockets_.abort_all(); }

  std::size_t connection_count() const { return sockets_.connection_count(); }

 private:
  friend class NativeConnection;

  PortRouter& router_;  // every request reaches its port's Resolver through it
  NativeHooks hooks_;
  ServerCounters& counters_;
  NativeLimits limits_;
  SocketServer sockets_;  // last: its connections use the members above until they close
};

}  // namespace ibat::server
