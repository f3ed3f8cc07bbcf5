// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ACM endpoint connections: one message per request (at most 592 bytes), answered by tid, several
// may be in flight. Resolver errors map to ACM status codes as ibacm reports them.
#include "server/daemon/acm_server.h"

#include <array>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "server/acm/acm_messages.h"
#include "server/daemon/log_limiter.h"

namespace ibat::server {

using asio::local::stream_protocol;

namespace {

// Unanswered requests per ACM connection; ib_acme has one, librdmacm a handful.
constexpr std::size_t kMaxAcmOutstanding = 256;
// Reply bytes a client may leave unread before it is disconnected.
constexpr std::size_t kMaxAcmQueuedBytes = 1u << 20;

acm::Status acm_status(core::Error e) {
  switch (e) {
    case core::Error::ok: return acm::Status::success;
    case core::Error::timeout: return acm::Status::etimedout;
    case core::Error::overloaded: return acm::Status::enomem;
    case core::Error::invalid: return acm::Status::einval;
    case core::Error::unreachable:
    case core::Error::no_record:
    case core::Error::cancelled: break;
  }
  return acm::Status::enodata;
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return {};
  return std::string(name.data());
}

}  // namespace

class AcmConnection : public Connection {
 public:
  AcmConnection(AcmServer& server, stream_protocol::socket socket)
      : Connection(server.sockets_, std::move(socket), StreamStyle{4096, true}), server_(server) {}
  ~AcmConnection() override { cancel_outstanding(); }

 private:
  void on_bytes(std::span<const std::uint8_t> bytes) override {
    in_.insert(in_.end(), bytes.begin(), bytes.end());
    while (!closing() && can_reply()) {
      acm::Framing f = acm::frame(in_);
      if (f.kind == acm::Framing::Kind::need_more) break;
      if (f.kind == acm::Framing::Kind::invalid) {
        ++server_.counters_.acm_protocol_errors;
        if (client_log_limiter().allow("malformed ACM message")) spdlog::info("acm: closing a connection: {}", f.error);
        abort();
        return;
      }
      std::vector<std::uint8_t> message(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
      in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
      handle(message);
    }
  }

  void on_close() override { cancel_outstanding(); }

  // A header-only response carrying an error status.
  void answer_error(acm::Opcode opcode, const acm::Tid& tid, acm::Status status) {
    ++server_.counters_.acm_errors;
    send(acm::encode_status_response(opcode, tid, status));
  }

  void handle(std::span<const std::uint8_t> message) {
    ++server_.counters_.acm_requests;
    auto decoded = acm::decode_request(message);
    if (auto* error = std::get_if<acm::RequestError>(&decoded)) {
      if (error->fatal) {
        ++server_.counters_.acm_protocol_errors;
        if (client_log_limiter().allow("malformed ACM message"))
          spdlog::info("acm: closing a connection: {}", error->message);
        abort();
        return;
      }
      answer_error(error->opcode, error->tid, error->status);
      return;
    }
    std::visit([this](const auto& request) { serve(request); }, std::get<acm::Request>(decoded));
  }

  void serve(const acm::ResolvePathRequest& r) {
    core::ResolveRequest request;
    if (!r.path.dgid.is_zero()) {
      request.target = r.path.dgid;
    } else if (r.path.dlid.is_valid_unicast()) {
      request.target = r.path.dlid;
    } else {
      answer_error(acm::Opcode::resolve, r.tid, acm::Status::edestaddr);
      return;
    }
    if (!r.path.sgid.is_zero()) {
      // As ibacm: a source GID no endpoint has is ESRCADDR.
      if (server_.router_.size() > 1 && !server_.router_.find(r.path.sgid)) {
        answer_error(acm::Opcode::resolve, r.tid, acm::Status::esrcaddr);
        return;
      }
      request.sgid = r.path.sgid;
    }
    if (r.path.pkey.is_valid()) request.pkey = r.path.pkey;
    // The ACM record has no component mask: a ServiceID or QoS class of 0 is taken as not given.
    if (r.path.service_id != 0) request.service_id = r.path.service_id;
    if (r.path.qos_class != 0) request.qos_class = r.path.qos_class;
    request.force_sa = (r.flags & acm::kFlagQuerySa) != 0;
    request.cache_only = (r.flags & acm::kFlagNoDelay) != 0;
    resolve(r.tid, request);
  }

  void serve(const acm::ResolveAddressRequest& r) {
    const auto* ip = std::get_if<core::IpAddr>(&r.dest.address);
    if (ip == nullptr) {  // names are not resolved: ibat has no name service
      answer_error(acm::Opcode::resolve, r.tid, acm::Status::edesttype);
      return;
    }
    ++server_.address_lookups_;
    core::ResolveRequest request;
    request.target = *ip;
    request.cache_only = (r.dest.flags & acm::kFlagNoDelay) != 0;
    resolve(r.tid, request);
  }

  // As ibacm: an index >= 1 names an endpoint (one per port, in the router's order), else a source
  // address names the endpoint owning it (the host name EP_QUERY lists: the default port's); no
  // such endpoint: ESRCADDR. Index 0 without a source: the whole service, every port summed.
  void serve(const acm::PerfQueryRequest& r) {
    const PortRouter& ports = server_.router_;
    std::optional<std::size_t> only;
    if (r.ep_index >= 1) {
      if (r.ep_index > ports.size()) return answer_error(acm::Opcode::perf_query, r.tid, acm::Status::esrcaddr);
      only = r.ep_index - 1;
    } else if (r.source) {
      if (!owned_by_the_endpoint(*r.source)) return answer_error(acm::Opcode::perf_query, r.tid, acm::Status::esrcaddr);
      only = ports.default_port();
    }
    core::Stats s;
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (!only || *only == i) s += ports.resolver(i).stats();
    acm::PerfQueryResponse response;
    response.tid = r.tid;
    response.counters.resize(acm::kCounterCount);
    auto set = [&](acm::Counter c, std::uint64_t v) { response.counters[static_cast<std::size_t>(c)] = v; };
    set(acm::Counter::error, s.failures);
    set(acm::Counter::resolve, s.resolves);
    set(acm::Counter::no_data, s.failures_by_reason[static_cast<std::size_t>(core::Error::no_record)]);
    set(acm::Counter::addr_query, 0);  // ibat sends no address queries: ARP is the kernel's
    set(acm::Counter::addr_cache, server_.address_lookups_);
    set(acm::Counter::route_query, s.sa_queries);
    set(acm::Counter::route_cache, s.cache_hits + s.stale_hits + s.provisional_hits);
    send(acm::encode(response));
  }

  // Endpoint k (1-based) is the router's port k-1; `port` 0 means any port, else it must be the
  // endpoint's port number. The host name is listed as the default port's address.
  void serve(const acm::EpQueryRequest& r) {
    const PortRouter& ports = server_.router_;
    if (r.ep_index < 1 || r.ep_index > ports.size()) {
      answer_error(acm::Opcode::ep_query, r.tid, acm::Status::einval);
      return;
    }
    const std::size_t index = r.ep_index - 1;
    const RoutedPort& routed = ports.port(index);
    const int number = routed.number == 0 ? 1 : routed.number;  // an unnamed port (tests) is port 1
    if (r.port != 0 && r.port != number) {
      answer_error(acm::Opcode::ep_query, r.tid, acm::Status::einval);
      return;
    }
    core::LocalPort port = routed.local_port ? routed.local_port() : core::LocalPort{};
    acm::EpQueryResponse response;
    response.tid = r.tid;
    response.ep.dev_guid = port.gid.interface_id();
    response.ep.port_num = static_cast<std::uint8_t>(number);
    int device_ports = 0;  // the device's ports that ibatd serves
    for (std::size_t i = 0; i < ports.size(); ++i) device_ports += ports.port(i).device == routed.device ? 1 : 0;
    response.ep.phys_port_cnt = static_cast<std::uint8_t>(device_ports);
    response.ep.pkey = ports.resolver(index).policy().default_pkey;
    response.ep.provider = "ibat";
    if (std::string name = host_name(); !name.empty() && index == ports.default_port())
      response.ep.addresses.push_back(name);
    send(acm::encode(response));
  }

  static bool owned_by_the_endpoint(const acm::EpAddr& address) {
    const auto* name = std::get_if<std::string>(&address.address);
    return name != nullptr && !name->empty() && *name == host_name();
  }

  void resolve(const acm::Tid& tid, core::ResolveRequest request) {
    if (outstanding_.size() >= kMaxAcmOutstanding || !take_pending_share()) {
      answer_error(acm::Opcode::resolve, tid, acm::Status::enomem);  // ACM's `overloaded`
      return;
    }
    std::uint64_t key = next_key_++;
    outstanding_.emplace(key, 0);
    request.requester = peer().uid;  // its misses queue for the SA fairly with other users'
    // `this` outlives the request: every outstanding request is cancelled before destruction.
    core::RequestId id = server_.router_.resolve(
        request, [this, key, tid](core::RequestId, const core::ResolveResult& result) {
          complete(key, tid, result);
        });
    if (auto it = outstanding_.find(key); it != outstanding_.end()) it->second = id;
  }

  void complete(std::uint64_t key, const acm::Tid& tid, const core::ResolveResult& result) {
    if (outstanding_.erase(key) == 0) return;
    give_back_pending_share();
    acm::ResolveResponse response;
    response.tid = tid;
    response.status = acm_status(result.error);
    if (response.status != acm::Status::success) ++server_.counters_.acm_errors;
    if (result.error == core::Error::ok) response.path = result.path;
    if (send(acm::encode(response))) flush();
  }

  void cancel_outstanding() {
    std::vector<core::RequestId> ids;
    for (const auto& [key, id] : outstanding_) ids.push_back(id);
    outstanding_.clear();
    for (core::RequestId id : ids) {
      give_back_pending_share();
      server_.router_.cancel(id);
    }
  }

  AcmServer& server_;
  std::vector<std::uint8_t> in_;  // bounded: frame() rejects a message longer than 592 bytes
  std::unordered_map<std::uint64_t, core::RequestId> outstanding_;
  std::uint64_t next_key_ = 1;
};

AcmServer::AcmServer(asio::io_context& loop, PortRouter& router, ServerCounters& counters)
    : router_(router),
      counters_(counters),
      sockets_(
          loop, "acm", counters.acm,
          [this](stream_protocol::socket socket) {
            return std::make_shared<AcmConnection>(*this, std::move(socket));
          }) {}

AcmServer::~AcmServer() { close(); }

void AcmServer::listen(const std::string& path, std::uint32_t mode, std::uint32_t max_connections,
                       std::uint32_t max_connections_per_uid) {
  sockets_.listen(path, mode, SocketLimits{max_connections, kMaxAcmQueuedBytes, max_connections_per_uid});
}

void AcmServer::set_max_connections(std::uint32_t max_connections, std::uint32_t max_connections_per_uid) {
  sockets_.set_limits(SocketLimits{max_connections, kMaxAcmQueuedBytes, max_connections_per_uid});
}

}  // namespace ibat::server
