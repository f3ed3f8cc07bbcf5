// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel local SA responder's socket and request handling (local_sa_responder.h).
#include "kernel/local_sa_responder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <linux/capability.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace ibat::kernel {
namespace {

constexpr std::size_t kLatencySamples = 4096;

bool has_net_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32))) != 0;
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank), samples.end());
  return samples[rank];
}

// Logs the first occurrence of each kind of bad message, so a misbehaving sender cannot flood the log.
void log_once(std::string_view kind, std::string_view detail) {
  static std::set<std::string, std::less<>> seen;
  if (!seen.insert(std::string(kind)).second) return;
  spdlog::warn("local SA: {} ({}); answered with an error, further ones are only counted (ibat stats)",
               kind, detail);
}

}  // namespace

LocalSaResponder::LocalSaResponder(asio::io_context& loop, LocalSaOptions options, Resolve resolve)
    : options_(std::move(options)), resolve_(std::move(resolve)), socket_(loop) {}

LocalSaResponder::~LocalSaResponder() {
  *alive_ = false;
  stop();
}

bool LocalSaResponder::start() {
  if (!options_.enabled) return false;
  const bool opened = options_.socket_path.empty() ? open_netlink() : open_unix();
  if (!opened) return false;
  asio::error_code ec;
  socket_.non_blocking(true, ec);  // a reader that stops reading must never stall the loop
  stats_.running = true;
  receive();
  return true;
}

bool LocalSaResponder::open_netlink() {
  asio::error_code ec;
  socket_.open(asio::generic::datagram_protocol(AF_NETLINK, NETLINK_RDMA), ec);
  if (ec) {
    spdlog::info("local SA responder off: this kernel has no NETLINK_RDMA ({}); kernel path queries go "
                 "to the SA directly", ec.message());
    return false;
  }
  if (!has_net_admin()) {
    spdlog::warn("local SA responder off: replies to the kernel need CAP_NET_ADMIN (the packaged "
                 "ibatd.service grants it; or set [linux] local_sa = false)");
    socket_.close(ec);
    return false;
  }
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_groups = 1u << (RDMA_NL_GROUP_LS - 1);
  socket_.bind(Endpoint(&local, sizeof(local), NETLINK_RDMA), ec);
  if (ec) {
    spdlog::warn("local SA responder off: cannot join RDMA_NL_GROUP_LS: {}", ec.message());
    socket_.close(ec);
    return false;
  }
  sockaddr_nl bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(socket_.native_handle(), reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    port_id_ = bound.nl_pid;
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  kernel_ = Endpoint(&kernel, sizeof(kernel), NETLINK_RDMA);
  netlink_ = true;
  spdlog::info("local SA responder: answering the kernel's path queries (NETLINK_RDMA group {})",
               RDMA_NL_GROUP_LS);
  return true;
}

bool LocalSaResponder::open_unix() {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (options_.socket_path.size() >= sizeof(address.sun_path)) {
    spdlog::error("local SA responder off: local_sa_socket '{}' is longer than {} bytes",
                  options_.socket_path, sizeof(address.sun_path) - 1);
    return false;
  }
  std::memcpy(address.sun_path, options_.socket_path.data(), options_.socket_path.size());
  asio::error_code ec;
  socket_.open(asio::generic::datagram_protocol(AF_UNIX, 0), ec);
  ::unlink(options_.socket_path.c_str());
  if (!ec) socket_.bind(Endpoint(&address, sizeof(address)), ec);
  if (ec) {
    spdlog::error("local SA responder off: cannot bind {}: {}", options_.socket_path, ec.message());
    socket_.close(ec);
    return false;
  }
  spdlog::info("local SA responder: answering netlink-format path queries on {} (datagram socket)",
               options_.socket_path);
  return true;
}

void LocalSaResponder::stop() {
  if (!socket_.is_open()) return;
  asio::error_code ec;
  socket_.close(ec);
  if (!netlink_ && !options_.socket_path.empty()) ::unlink(options_.socket_path.c_str());
  stats_.running = false;
}

void LocalSaResponder::receive() {
  socket_.async_receive_from(asio::buffer(buffer_), sender_, [this, alive = alive_](asio::error_code ec, std::size_t n) {
    if (!*alive || ec == asio::error::operation_aborted || !socket_.is_open()) return;
    if (ec) {
      // ENOBUFS: the kernel dropped requests it multicast to us; it times them out and asks the SA.
      count_error(ec == asio::error::no_buffer_space ? "receive_overrun" : "receive_error");
    } else {
      on_datagram(n);
    }
    receive();
  });
}

void LocalSaResponder::on_datagram(std::size_t size) {
  const auto received = Clock::now();
  for (const Message& message : decode_datagram(std::span(buffer_.data(), size))) {
    ++stats_.requests;
    if (const auto* query = std::get_if<ResolveQuery>(&message.content)) {
      on_resolve(message.id, *query, received);
      continue;
    }
    const Problem problem = std::get<Problem>(message.content);
    count_error(to_string(problem));
    log_once(to_string(problem), fmt::format("netlink type {:#x}, seq {}", message.id.type, message.id.seq));
    if (message.answerable) reply(netlink_ ? kernel_ : sender_, encode_error_reply(message.id, port_id_), received);
  }
}

void LocalSaResponder::on_resolve(const MessageId& id, const ResolveQuery& query, Clock::time_point received) {
  core::ResolveRequest request;
  request.target = *query.dgid;
  request.sgid = query.sgid;
  request.pkey = query.pkey;
  request.service_id = query.service_id;
  request.qos_class = query.qos_class;
  request.tclass = query.tclass;
  request.timeout = std::chrono::duration_cast<core::Duration>(options_.deadline);
  const Endpoint to = netlink_ ? kernel_ : sender_;
  resolve_(query, request, [this, alive = alive_, id, query, to, received](core::RequestId, const core::ResolveResult& result) {
    if (!*alive || !socket_.is_open()) return;
    if (result.error != core::Error::ok) {
      count_error(core::to_string(result.error));
      reply(to, encode_error_reply(id, port_id_), received);
      return;
    }
    if (!path_fits(query.path_use, result.path)) {
      count_error("not_reversible");
      reply(to, encode_error_reply(id, port_id_), received);
      return;
    }
    core::PathRecord path = result.path;
    // What the kernel constrained comes back as it asked (an SA answers with the same values); the
    // Resolver echoes the TClass itself.
    if (query.service_id) path.service_id = *query.service_id;
    if (query.qos_class) path.qos_class = *query.qos_class;
    ++stats_.answered;
    reply(to, encode_path_reply(id, port_id_, query.path_use, path), received);
  });
}

void LocalSaResponder::reply(const Endpoint& to, std::vector<std::uint8_t> bytes, Clock::time_point received) {
  asio::error_code ec;
  socket_.send_to(asio::buffer(bytes), to, 0, ec);
  if (ec == asio::error::would_block) {
    count_error("reply_dropped_receiver_full");
    return;
  }
  if (ec) {
    count_error("send_failed");
    log_once("send_failed", ec.message());
    return;
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - received).count();
  if (latencies_us_.size() < kLatencySamples) {
    latencies_us_.push_back(us);
  } else {
    latencies_us_[latency_next_] = us;
    latency_next_ = (latency_next_ + 1) % kLatencySamples;
  }
}

void LocalSaResponder::count_error(std::string_view reason) { ++stats_.errors[std::string(reason)]; }

LocalSaStats LocalSaResponder::stats() const {
  LocalSaStats out = stats_;
  out.answer_p50_us = percentile(latencies_us_, 0.50);
  out.answer_p99_us = percentile(latencies_us_, 0.99);
  return out;
}

}  // namespace ibat::kernel
