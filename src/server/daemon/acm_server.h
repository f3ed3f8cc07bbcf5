// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ACM-compatible endpoint (rdma-core ibacm protocol v1, via the ibat_acm_codec): lets ib_acme
// and librdmacm resolve through ibatd. RESOLVE by path (DGID/DLID) or by IP through the endpoint
// table, PERF_QUERY with the 7 ibacm counters, EP_QUERY: one endpoint per local port (index 1 is
// the router's first port), as ibacm opens one per port. Sockets, connection limits, reply
// queues and the per-uid share of pending requests are the shared skeleton's (socket_server.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <asio/io_context.hpp>

#include "core/resolver.h"
#include "server/daemon/json_views.h"
#include "server/daemon/port_router.h"
#include "server/daemon/socket_server.h"

namespace ibat::server {

class AcmConnection;

class AcmServer {
 public:
  AcmServer(asio::io_context& loop, PortRouter& router, ServerCounters& counters);
  ~AcmServer();
  AcmServer(const AcmServer&) = delete;
  AcmServer& operator=(const AcmServer&) = delete;

  // Throws std::runtime_error naming the path on failure.
  void listen(const std::string& path, std::uint32_t mode, std::uint32_t max_connections,
              std::uint32_t max_connections_per_uid);
  void set_max_connections(std::uint32_t max_connections, std::uint32_t max_connections_per_uid);
  void set_users(const SharedUsers& users) { sockets_.set_users(users); }
  // Stops accepting, removes the socket file, closes every connection (pending requests cancelled).
  void close() { sockets_.abort_all(); }

 private:
  friend class AcmConnection;

  PortRouter& router_;  // every request reaches its port's Resolver through it
  ServerCounters& counters_;
  std::uint64_t address_lookups_ = 0;  // RESOLVE by IP: answered through the endpoint table
  SocketServer sockets_;               // last: its connections use the members above until they close
};

}  // namespace ibat::server
