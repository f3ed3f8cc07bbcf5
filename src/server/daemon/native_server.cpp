// Native protocol connections: framing, dispatch of every op, the outstanding-request table that
// ties each pipelined RESOLVE to its Resolver request, bounded reply queues and WATCH streams.
#include "server/daemon/native_server.h"

#include <array>
#include <unordered_set>
#include <vector>

#include <asio/post.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "server/daemon/unix_listener.h"
#include "protocol/frame_splitter.h"
#include "protocol/messages.h"

namespace ibat::server {

using asio::local::stream_protocol;
using protocol::Op;
using protocol::Status;

class NativeConnection : public std::enable_shared_from_this<NativeConnection> {
 public:
  NativeConnection(NativeServer& server, stream_protocol::socket socket, std::uint64_t serial)
      : server_(server), socket_(std::move(socket)), serial_(serial),
        peer_(read_peer_credentials(socket_.native_handle())) {}

  ~NativeConnection() { cancel_outstanding(); }

  void start() { read(); }

  // Stop reading, send what is queued, then close.
  void drain() {
    draining_ = true;
    flush();
  }

  // Close now; requests in flight are cancelled without a reply.
  void abort() {
    if (closed_) return;
    closed_ = true;
    cancel_outstanding();
    asio::error_code ignored;
    socket_.close(ignored);
    server_.forget(serial_);  // may destroy *this once the handlers holding it return
  }

  void send_event(const std::string& body) {
    if (closed_ || draining_ || watches_.empty()) return;
    if (over_queue_limit()) return;
    for (std::uint32_t id : watches_) {
      protocol::FrameHeader header;
      header.op = protocol::reply_op(Op::watch);
      header.flags = protocol::kFlagMore;
      header.id = id;
      protocol::append_frame(out_, header,
                             std::span(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
    }
    flush();
  }

 private:
  struct Outstanding {
    core::RequestId request = 0;  // 0 until resolve() returns
  };

  const NativeLimits& limits() const { return server_.limits_; }
  core::Resolver& resolver() { return server_.resolver_; }

  void read() {
    socket_.async_read_some(asio::buffer(in_), [self = shared_from_this()](asio::error_code ec, std::size_t n) {
      self->on_read(ec, n);
    });
  }

  void on_read(asio::error_code ec, std::size_t n) {
    if (closed_) return;
    if (ec) {  // EOF or reset: the client is gone
      abort();
      return;
    }
    if (draining_) return;
    std::optional<protocol::SplitError> error = splitter_.feed(
        std::span<const std::uint8_t>(in_.data(), n),
        [this](const protocol::FrameHeader& header, std::span<const std::uint8_t> payload) {
          if (!failed_ && !closed_) on_frame(header, payload);
        });
    if (server_.hooks_.after_input) server_.hooks_.after_input();
    if (closed_) return;
    if (error && !failed_) fail(error->status, error->id, error->message);
    flush();
    if (!failed_ && !closed_) read();
  }

  void on_frame(const protocol::FrameHeader& header, std::span<const std::uint8_t> payload) {
    std::optional<Op> op = protocol::request_op(header.op);
    if (!op) {
      protocol::append_error(out_, header.id, Status::unsupported,
                             "unknown op " + std::to_string(header.op));
      return;
    }
    if (over_queue_limit()) return;
    switch (*op) {
      case Op::resolve: return on_resolve(header.id, payload);
      case Op::neigh_add: return on_neigh_add(header.id, payload);
      case Op::neigh_del: return on_neigh_del(header.id, payload);
      case Op::neigh_list:
        if (!check_empty(*op, header.id, payload)) return;
        return protocol::append_chunked_reply(out_, *op, header.id,
                                              neighbours_json(resolver().neighbours()).dump());
      case Op::paths:
        if (!check_empty(*op, header.id, payload)) return;
        return protocol::append_chunked_reply(out_, *op, header.id, paths_json(resolver().entries()).dump());
      case Op::stats:
        if (!check_empty(*op, header.id, payload)) return;
        return protocol::append_chunked_reply(out_, *op, header.id, server_.hooks_.stats_json());
      case Op::flush: return on_flush(header.id, payload);
      case Op::watch: return on_watch(header.id, payload);
      case Op::cancel: return on_cancel(header.id, payload);
      case Op::table_hits: return on_table_hits(header.id, payload);
      case Op::error: break;
    }
    protocol::append_error(out_, header.id, Status::unsupported, "ERROR is not a request");
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
      if (!failed_) protocol::append_empty_reply(out_, id, Op::resolve, Status::overloaded);
      return;
    }
    outstanding_.emplace(id, Outstanding{});
    // `this` outlives the request: every outstanding request is cancelled before destruction.
    core::RequestId request = resolver().resolve(
        decoded.value(), [this, id](core::RequestId, const core::ResolveResult& result) {
          complete(id, result);
        });
    if (auto it = outstanding_.find(id); it != outstanding_.end()) it->second.request = request;
  }

  void complete(std::uint32_t id, const core::ResolveResult& result) {
    if (outstanding_.erase(id) == 0) return;
    if (closed_ || failed_) return;
    if (over_queue_limit()) return;
    protocol::append_resolve_reply(out_, id, result);
    flush();
  }

  bool authorized(Op op, std::uint32_t id) {
    if (server_.hooks_.may_administer && server_.hooks_.may_administer(peer_)) return true;
    ++server_.counters_.denied;
    spdlog::warn("native: {} denied to pid {} uid {}", protocol::to_string(op), peer_.pid, peer_.uid);
    protocol::append_empty_reply(out_, id, op, Status::denied);
    return false;
  }

  void on_neigh_add(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_neigh_add(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::neigh_add, id)) return;
    const auto& n = decoded.value();
    resolver().on_neighbour(n.ip, n.hw, n.slid);
    protocol::append_empty_reply(out_, id, Op::neigh_add, Status::ok);
    server_.publish(event_json("neighbour", {{"action", "add"}, {"ip", n.ip.to_string()},
                                             {"hw", n.hw.to_string()}}));
  }

  void on_neigh_del(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_neigh_del(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::neigh_del, id)) return;
    resolver().on_neighbour_removed(decoded.value().ip);
    protocol::append_empty_reply(out_, id, Op::neigh_del, Status::ok);
    server_.publish(event_json("neighbour", {{"action", "del"}, {"ip", decoded.value().ip.to_string()}}));
  }

  void on_flush(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_flush(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (!authorized(Op::flush, id)) return;
    const auto& f = decoded.value();
    nlohmann::json fields = nlohmann::json::object();
    if (f.dgid) {
      resolver().flush(*f.dgid, f.pkey);
      fields["dgid"] = f.dgid->to_string();
      if (f.pkey) fields["pkey"] = f.pkey->to_string();
    } else {
      resolver().flush_all();
    }
    if (server_.hooks_.after_flush) server_.hooks_.after_flush();
    protocol::append_empty_reply(out_, id, Op::flush, Status::ok);
    server_.publish(event_json("flush", std::move(fields)));
  }

  void on_watch(std::uint32_t id, std::span<const std::uint8_t> payload) {
    if (!check_empty(Op::watch, id, payload)) return;
    if (!claim_id(id)) {
      if (!failed_) protocol::append_empty_reply(out_, id, Op::watch, Status::overloaded);
      return;
    }
    watches_.insert(id);
  }

  void on_cancel(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_cancel(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    std::uint32_t target = decoded.value().target_id;
    if (auto it = outstanding_.find(target); it != outstanding_.end()) {
      resolver().cancel(it->second.request);  // its completion answers `cancelled`
      protocol::append_empty_reply(out_, id, Op::cancel, Status::ok);
    } else if (watches_.erase(target) != 0) {
      protocol::append_empty_reply(out_, target, Op::watch, Status::cancelled);
      protocol::append_empty_reply(out_, id, Op::cancel, Status::ok);
    } else {
      protocol::append_empty_reply(out_, id, Op::cancel, Status::invalid);
    }
  }

  void on_table_hits(std::uint32_t id, std::span<const std::uint8_t> payload) {
    auto decoded = protocol::decode_table_hits(payload);
    if (!decoded) return fail(Status::malformed, id, decoded.error());
    if (server_.hooks_.table_hits) server_.hooks_.table_hits(decoded.value());
    protocol::append_empty_reply(out_, id, Op::table_hits, Status::ok);
  }

  // Malformed input: cancel what was accepted, send one ERROR, close once it is written.
  void fail(Status status, std::uint32_t id, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    ++server_.counters_.protocol_errors;
    spdlog::info("native: closing connection of pid {}: {}", peer_.pid, message);
    cancel_outstanding();
    watches_.clear();
    protocol::append_error(out_, id, status, message);
    draining_ = true;
  }

  void cancel_outstanding() {
    std::vector<core::RequestId> requests;
    requests.reserve(outstanding_.size());
    for (const auto& [id, o] : outstanding_) requests.push_back(o.request);
    outstanding_.clear();  // completions arriving from cancel() find nothing to answer
    for (core::RequestId r : requests) resolver().cancel(r);
  }

  // A client that lets its replies pile up is cut off. One large reply (a listing) may exceed
  // the limit on its own; what is refused is queueing more on top of a full queue.
  bool over_queue_limit() {
    if (failed_) return true;
    if (out_.size() + writing_.size() <= limits().max_queued_bytes_per_connection) return false;
    ++server_.counters_.slow_clients;
    spdlog::warn("native: disconnecting pid {}: {} reply bytes unread", peer_.pid, out_.size() + writing_.size());
    // Defer the close: this may run inside a Resolver completion or a frame handler.
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->abort(); });
    failed_ = true;
    return true;
  }

  void flush() {
    if (closed_ || writing_active_) return;
    if (out_.empty()) {
      if (draining_) abort();
      return;
    }
    writing_.swap(out_);
    out_.clear();
    writing_active_ = true;
    asio::async_write(socket_, asio::buffer(writing_),
                      [self = shared_from_this()](asio::error_code ec, std::size_t) { self->on_written(ec); });
  }

  void on_written(asio::error_code ec) {
    writing_active_ = false;
    writing_.clear();
    if (closed_) return;
    if (ec) {
      abort();
      return;
    }
    flush();
  }

  NativeServer& server_;
  stream_protocol::socket socket_;
  std::uint64_t serial_;
  PeerCredentials peer_;
  protocol::FrameSplitter splitter_;
  std::array<std::uint8_t, 64 * 1024> in_{};
  std::vector<std::uint8_t> out_;      // replies not yet handed to the socket
  std::vector<std::uint8_t> writing_;  // the buffer of the write in flight
  bool writing_active_ = false;
  bool draining_ = false;  // no more requests; close once everything is written
  bool failed_ = false;    // protocol error or overflow: nothing more is accepted
  bool closed_ = false;
  std::unordered_map<std::uint32_t, Outstanding> outstanding_;
  std::unordered_set<std::uint32_t> watches_;
};

NativeServer::NativeServer(asio::io_context& loop, core::Resolver& resolver, NativeHooks hooks,
                           ServerCounters& counters)
    : loop_(loop), resolver_(resolver), hooks_(std::move(hooks)), counters_(counters) {}

NativeServer::~NativeServer() { abort_all(); }

void NativeServer::listen(const std::string& path, std::uint32_t mode, const NativeLimits& limits) {
  limits_ = limits;
  acceptor_.emplace(listen_unix(loop_, path, mode));
  path_ = path;
  accept();
}

void NativeServer::set_limits(const NativeLimits& limits) { limits_ = limits; }

void NativeServer::accept() {
  acceptor_->async_accept([this](asio::error_code ec, stream_protocol::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_ || !acceptor_->is_open()) return;
    if (!ec) {
      if (connections_.size() >= limits_.max_connections) {
        spdlog::warn("native: refusing a connection: {} open (max_connections)", connections_.size());
      } else {
        std::uint64_t serial = next_serial_++;
        auto connection = std::make_shared<NativeConnection>(*this, std::move(socket), serial);
        connections_.emplace(serial, connection);
        ++counters_.connections_total;
        counters_.connections = connections_.size();
        connection->start();
      }
    } else {
      spdlog::warn("native: accept failed: {}", ec.message());
    }
    accept();
  });
}

void NativeServer::forget(std::uint64_t serial) {
  connections_.erase(serial);
  counters_.connections = connections_.size();
  if (connections_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
  }
}

void NativeServer::publish(const nlohmann::json& event) {
  std::string body = event.dump();
  std::vector<std::shared_ptr<NativeConnection>> targets;
  for (auto& [serial, c] : connections_) targets.push_back(c);
  for (auto& c : targets) c->send_event(body);
}

void NativeServer::drain(std::function<void()> done) {
  if (acceptor_) {
    asio::error_code ignored;
    acceptor_->close(ignored);
    acceptor_.reset();
    remove_socket_file(path_);
  }
  if (connections_.empty()) {
    done();
    return;
  }
  drained_ = std::move(done);
  std::vector<std::shared_ptr<NativeConnection>> all;
  for (auto& [serial, c] : connections_) all.push_back(c);
  for (auto& c : all) c->drain();
}

void NativeServer::abort_all() {
  drained_ = nullptr;
  if (acceptor_) {
    asio::error_code ignored;
    acceptor_->close(ignored);
    acceptor_.reset();
    remove_socket_file(path_);
  }
  std::vector<std::shared_ptr<NativeConnection>> all;
  for (auto& [serial, c] : connections_) all.push_back(c);
  for (auto& c : all) c->abort();
}

}  // namespace ibat::server
