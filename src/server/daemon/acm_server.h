// The ACM-compatible endpoint (rdma-core ibacm protocol v1, via the ibat_acm_codec): lets ib_acme
// and librdmacm resolve through ibatd. RESOLVE by path (DGID/DLID) or by IP through the endpoint
// table, PERF_QUERY with the 7 ibacm counters, EP_QUERY describing the one local endpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>

#include "core/resolver.h"
#include "server/daemon/json_views.h"

namespace ibat::server {

struct AcmHooks {
  std::function<void()> after_input;             // the Resolver got input: re-arm its timer
  std::function<core::LocalPort()> local_port;   // the endpoint EP_QUERY describes
};

class AcmConnection;

class AcmServer {
 public:
  AcmServer(asio::io_context& loop, core::Resolver& resolver, AcmHooks hooks, ServerCounters& counters);
  ~AcmServer();
  AcmServer(const AcmServer&) = delete;
  AcmServer& operator=(const AcmServer&) = delete;

  // Throws std::runtime_error naming the path on failure.
  void listen(const std::string& path, std::uint32_t mode);
  // Stops accepting, removes the socket file, closes every connection (pending requests cancelled).
  void close();

 private:
  friend class AcmConnection;
  void accept();
  void forget(std::uint64_t serial);

  asio::io_context& loop_;
  core::Resolver& resolver_;
  AcmHooks hooks_;
  ServerCounters& counters_;
  std::string path_;
  std::optional<asio::local::stream_protocol::acceptor> acceptor_;
  std::unordered_map<std::uint64_t, std::shared_ptr<AcmConnection>> connections_;
  std::uint64_t next_serial_ = 1;
  std::uint64_t address_lookups_ = 0;  // RESOLVE by IP: answered through the endpoint table
};

}  // namespace ibat::server
