// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// LocalSaResponder: makes ibatd the kernel's local SA (docs/linux.md). It listens on NETLINK_RDMA,
// group RDMA_NL_GROUP_LS — or, for tests and twins, on an AF_UNIX datagram socket that carries the
// same messages byte for byte — and answers each RESOLVE from the Resolver: a path that fits the
// request's path_use at once, anything else (miss past the deadline, error, malformed or
// unsupported message) with RDMA_NL_LS_F_ERR so the kernel falls back to the SA without waiting.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <asio/generic/datagram_protocol.hpp>
#include <asio/io_context.hpp>

#include "core/resolver.h"
#include "kernel/local_sa_codec.h"

namespace ibat::kernel {

struct LocalSaOptions {
  bool enabled = true;
  std::string socket_path;  // empty: NETLINK_RDMA; else an AF_UNIX datagram socket at this path
  // How long an uncached path may take; safely below the kernel's local SA timeout (2000 ms default).
  std::chrono::milliseconds deadline{1000};
};

struct LocalSaStats {
  bool running = false;
  std::uint64_t requests = 0;  // messages received
  std::uint64_t answered = 0;  // replies with a path
  std::map<std::string, std::uint64_t> errors;  // F_ERR replies (and unanswerable messages) by reason
  double answer_p50_us = 0;    // receive-to-reply latency of the last 4096 replies
  double answer_p99_us = 0;
};

class LocalSaResponder {
 public:
  // Starts a resolve for the port the query names (device, port_num); `done` runs exactly once on
  // the loop thread.
  using Resolve = std::function<void(const ResolveQuery&, const core::ResolveRequest&, core::Completion)>;

  LocalSaResponder(asio::io_context& loop, LocalSaOptions options, Resolve resolve);
  ~LocalSaResponder();
  LocalSaResponder(const LocalSaResponder&) = delete;
  LocalSaResponder& operator=(const LocalSaResponder&) = delete;

  // Opens and binds the socket. False, after one log line saying why and what to do, when the
  // responder cannot run here (no NETLINK_RDMA in this kernel, no CAP_NET_ADMIN, bad path).
  bool start();
  void stop();
  LocalSaStats stats() const;

 private:
  using Socket = asio::generic::datagram_protocol::socket;
  using Endpoint = asio::generic::datagram_protocol::endpoint;
  using Clock = std::chrono::steady_clock;

  bool open_netlink();
  bool open_unix();
  void receive();
  void on_datagram(std::size_t size);
  void on_resolve(const MessageId& id, const ResolveQuery& query, Clock::time_point received);
  void reply(const Endpoint& to, std::vector<std::uint8_t> bytes, Clock::time_point received);
  void count_error(std::string_view reason);

  LocalSaOptions options_;
  Resolve resolve_;
  Socket socket_;
  Endpoint sender_;
  Endpoint kernel_;  // where replies go on NETLINK_RDMA (nl_pid 0)
  bool netlink_ = false;
  std::uint32_t port_id_ = 0;
  std::array<std::uint8_t, 8192> buffer_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  LocalSaStats stats_;
  std::vector<double> latencies_us_;  // ring of the last kLatencySamples
  std::size_t latency_next_ = 0;
};

}  // namespace ibat::kernel
