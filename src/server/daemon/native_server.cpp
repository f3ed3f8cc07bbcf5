// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Native protocol connections: framing, dispatch of every op, the outstanding-request table that
// ties each pipelined RESOLVE to its Resolver request, and WATCH streams. Sockets, reply queues
// and their cap are the skeleton's (socket_server.h).
#include "server/daemon/native_server.h"

#include <array>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <spdlog/spdlog.h>

#include "protocol/frame_splitter.h"
#include "protocol/messages.h"
#include "server/daemon/log_limiter.h"

namespace ibat::server {

using asio::local::stream_protocol;
using protocol::Op;
using protocol::Status;

class NativeConnection : public Connection {
 public:
  NativeConnection(NativeServer& server, stream_protocol::socket socket)
      : Connection(server.sockets_, std::move(socket), StreamStyle{64 * 1024, false}), server_(server) {}

  ~NativeConnection() override { cancel_outstanding(); }

  void send_event(const std::string& body) {
    if (closing() || watches_.empty()) return;
    std::vector<std::uint8_t> out;
    for (std::uint32_t id : watches_) {
      protocol::FrameHeader header;
      header.op = protocol::reply_op(Op::watch);
      header.flags = protocol::kFlagMore;
      header.id = id;
      protocol::append_frame(out, header,
                             std::span(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
    }
    if (send(std::move(out))) flush();
  }

 private:
  struct Outstanding {
    core::RequestId request = 0;  // 0 until resolve() returns
  };

  const NativeLimits& limits() const { return server_.limits_; }
  PortRouter& router() { return server_.router_; }

  // The frames of one read are one batch: one clock read for all, and their replies leave together
  // when on_read() flushes (docs/protocol.md, "Batching").
  void on_bytes(std::span<const std::uint8_t> bytes) override {
    std::optional<BatchClock::Batch> batch;
    if (server_.hooks_.clock) batch.emplace(*server_.hooks_.clock);
    in_batch_ = true;
    std::optional<protocol::SplitError> error =
        splitter_.feed(bytes, [this](const protocol::FrameHeader& header, std::span<const std::uint8_t> payload) {
          if (!closing()) on_frame(header, payload);
        });
    if (error && !closing()) fail(error->status, error->id, error->message);
    in_batch_ = false;
  }

  void on_close() override { cancel_outstanding(); }

  void reply_empty(std::uint32_t id, Op op, Status status) {
    std::vector<std::uint8_t> out;
    protocol::append_empty_reply(out, id, op, status);
    send(std::move(out));
  }
  void reply_error(std::uint32_t id, Status status, const std::string& message) {
    std::vector<std::uint8_t> out;
    protocol::append_error(out, id, status, message);
    send(std::move(out));
  }
  void reply_chunked(Op op, std::uint32_t id, const std::string& body) {
    std::vector<std::uint8_t> out;
    protocol::append_chunked_reply(out, op, id, body);
    send(std::move(out));
  }

  void on_frame(const protocol::FrameHeader& header, std::span<const std::uint8_t> payload) {
    if (!can_reply()) return;
    std::optional<Op> op = protocol::request_op(header.op);
    if (!op) return reply_error(header.id, Status::unsupported, "unknown op " + std::to_string(header.op));
    switch (*op) {
      case Op::resolve: return on_resolve(header.id, payload);
      case Op::neigh_add: return on_neigh_add(header.id, payload);
      case Op::neigh_del: return on_neigh_del(header.id, payload);
      case Op::neigh_list:
        if (!check_empty(*op, header.id, payload)) return;
        return reply_chunked(*op, header.id, neighbours_json(router().neighbours()).dump());
      case Op::paths: return on_paths(header.id, payload);
      case Op::stats:
        if (!check_empty(*op, header.id, payload)) return;
        return reply_chunked(*op, header.id, server_.hooks_.stats_json());
      case Op::flush: return on_flush(header.id, payload);
      case Op::watch: return on_watch(header.id, payload);
      case Op::cancel: return on_cancel(header.id, payload);
      case Op::table_hits: return on_table_hits(header.id, payload);
      case Op::error: break;
    }
    reply_error(header.id, Status::unsupported, "ERROR is not a request");
  }

  bool check_empty(Op op, std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_empty(op, payload);
    if (!decoded) fail(Status::malformed, id, decoded.error());
    return static_cast<bool>(decoded);
  }

  // Ids of outstanding requests (RESOLVE, WATCH) must be unique on the connection.
  bool claim_id(std::uint32_t id) {
    if (outstanding_.contains(id) || watches_.contains(id)) {
      fail(Status::malformed, id, "id " + std::to_string(id) + " is already in use by an unanswered request");
      return false;
    }
    if (outstanding_.size() + watches_.size() >= limits().max_outstanding_per_connection) {
      return false;
    }
    return true;
  }

  void on_resolve(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_resolve_request(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!claim_id(id)) {
      if (!failed_) reply_empty(id, Op::resolve, Status::overloaded);
      return;
    }
    if (!take_pending_share()) return reply_empty(id, Op::resolve, Status::overloaded);
    outstanding_.emplace(id, Outstanding{});
    core::ResolveRequest resolve = decoded.value();
    resolve.requester = peer().uid;  // its misses queue for the SA fairly with other users'
    // `this` outlives the request: every outstanding request is cancelled before destruction.
    core::RequestId request = router().resolve(
        resolve, [this, id](core::RequestId, const core::ResolveResult& result) {
          complete(id, result);
        });
    if (auto it = outstanding_.find(id); it != outstanding_.end()) it->second.request = request;
  }

  void complete(std::uint32_t id, const core::ResolveResult& result) {
    if (outstanding_.erase(id) == 0) return;
    give_back_pending_share();
    if (failed_) return;
    reply_.clear();  // reused: no allocation per reply
    protocol::append_resolve_reply(reply_, id, result);
    if (send(std::span<const std::uint8_t>(reply_)) && !in_batch_) flush();
  }

  // One page per request, so that no listing holds the loop for long (docs/protocol.md, PATHS).
  void on_paths(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_paths_request(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    const protocol::PathsRequest& req = decoded.value();
    std::uint32_t limit = req.limit == 0 ? protocol::kPathsPageSize : std::min(req.limit, protocol::kPathsPageSize);
    core::Resolver::EntryPage page = router().entries_page(req.cursor, limit);
    std::vector<std::uint8_t> out;
    protocol::append_paths_reply(out, id, {page.next.value_or(0), paths_json(page.entries).dump()});
    send(std::move(out));
  }

  bool authorized(Op op, std::uint32_t id) {
    if (server_.hooks_.may_administer && server_.hooks_.may_administer(peer())) return true;
    ++server_.counters_.denied;
    if (client_log_limiter().allow("privileged request denied"))
      spdlog::warn("native: {} denied to pid {} uid {}", protocol::to_string(op), peer().pid, peer().uid);
    reply_empty(id, op, Status::denied);
    return false;
  }

  void on_neigh_add(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_neigh_add(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::neigh_add, id)) return;
    const auto& n = decoded.value();
    if (n.hw.gid().is_zero()) return reply_empty(id, Op::neigh_add, Status::invalid);
    router().on_neighbour(n.ip, n.hw, n.slid);
    reply_empty(id, Op::neigh_add, Status::ok);
    server_.publish(event_json("neighbour", {{"action", "add"}, {"ip", n.ip.to_string()},
                                             {"hw", n.hw.to_string()}}));
  }

  void on_neigh_del(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_neigh_del(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::neigh_del, id)) return;
    if (!router().on_neighbour_removed(decoded.value().ip))  // like `ip neigh del`: nothing to delete
      return reply_empty(id, Op::neigh_del, Status::unreachable);
    reply_empty(id, Op::neigh_del, Status::ok);
    server_.publish(event_json("neighbour", {{"action", "del"}, {"ip", decoded.value().ip.to_string()}}));
  }

  void on_flush(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_flush(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::flush, id)) return;
    const auto& f = decoded.value();
    nlohmann::json fields = nlohmann::json::object();
    std::optional<std::size_t> port;
    if (f.sgid) {
      port = router().find(*f.sgid);
      if (!port) return reply_empty(id, Op::flush, Status::invalid);  // no port has that GID
      fields["sgid"] = f.sgid->to_string();
    }
    std::size_t dropped = 0;
    if (f.dgid) {
      dropped = router().flush(*f.dgid, f.pkey, port);
      fields["dgid"] = f.dgid->to_string();
      if (f.pkey) fields["pkey"] = f.pkey->to_string();
    } else {
      dropped = router().flush_all(port);
    }
    if (server_.hooks_.after_flush) server_.hooks_.after_flush();
    fields["dropped"] = dropped;
    std::vector<std::uint8_t> out;
    protocol::append_flush_reply(out, id, static_cast<std::uint32_t>(std::min<std::size_t>(dropped, UINT32_MAX)));
    send(std::move(out));
    server_.publish(event_json("flush", std::move(fields)));
  }

  void on_watch(std::uint32_t id, std::span<const std::uint8_t> payload) {
    if (!check_empty(Op::watch, id, payload)) return;
    if (!claim_id(id)) {
      if (!failed_) reply_empty(id, Op::watch, Status::overloaded);
      return;
    }
    watches_.insert(id);
  }

  void on_cancel(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_cancel(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    std::uint32_t target = decoded.value().target_id;
    if (auto it = outstanding_.find(target); it != outstanding_.end()) {
      router().cancel(it->second.request);  // its completion answers `cancelled`
      reply_empty(id, Op::cancel, Status::ok);
    } else if (watches_.erase(target) != 0) {
      reply_empty(target, Op::watch, Status::cancelled);
      reply_empty(id, Op::cancel, Status::ok);
    } else {
      reply_empty(id, Op::cancel, Status::invalid);
    }
  }

  void on_table_hits(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_table_hits(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (server_.hooks_.table_hits) server_.hooks_.table_hits(decoded.value());
    reply_empty(id, Op::table_hits, Status::ok);
  }

  // Malformed input: cancel what was accepted, send one ERROR, close once it is written.
  void fail(Status status, std::uint32_t id, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    ++server_.counters_.protocol_errors;
    if (client_log_limiter().allow("malformed native request"))
      spdlog::info("native: closing connection of pid {}: {}", peer().pid, message);
    cancel_outstanding();
    watches_.clear();
    reply_error(id, status, message);
    drain();
  }

  void cancel_outstanding() {
    std::vector<core::RequestId> requests;
    requests.reserve(outstanding_.size());
    for (const auto& [id, o] : outstanding_) requests.push_back(o.request);
    outstanding_.clear();  // completions arriving from cancel() find nothing to answer
    for (core::RequestId r : requests) {
      give_back_pending_share();
      router().cancel(r);
    }
  }

  NativeServer& server_;
  protocol::FrameSplitter splitter_;
  bool failed_ = false;  // protocol error: nothing more is answered but the ERROR
  bool in_batch_ = false;  // inside on_bytes(): on_read() flushes the replies afterwards
  std::vector<std::uint8_t> reply_;  // the RESOLVE reply being encoded
  std::unordered_map<std::uint32_t, Outstanding> outstanding_;
  std::unordered_set<std::uint32_t> watches_;
};

NativeServer::NativeServer(asio::io_context& loop, PortRouter& router, NativeHooks hooks,
                           ServerCounters& counters)
    : router_(router),
      hooks_(std::move(hooks)),
      counters_(counters),
      sockets_(
          loop, "native", counters.native,
          [this](stream_protocol::socket socket) {
            return std::make_shared<NativeConnection>(*this, std::move(socket));
          }) {}

NativeServer::~NativeServer() { sockets_.abort_all(); }

namespace {

SocketLimits socket_limits(const NativeLimits& limits) {
  return {limits.max_connections, limits.max_queued_bytes_per_connection, limits.max_connections_per_uid};
}

}  // namespace

void NativeServer::listen(const std::string& path, std::uint32_t mode, const NativeLimits& limits) {
  limits_ = limits;
  sockets_.listen(path, mode, socket_limits(limits));
}

void NativeServer::set_limits(const NativeLimits& limits) {
  limits_ = limits;
  sockets_.set_limits(socket_limits(limits));
}

void NativeServer::publish(const nlohmann::json& event) {
  std::string body = event.dump();
  for (auto& c : sockets_.connections()) static_cast<NativeConnection&>(*c).send_event(body);
}

}  // namespace ibat::server
