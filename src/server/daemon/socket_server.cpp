// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The socket skeleton shared by the native and ACM servers: accept loop, connection table, reply
// queue with its cap, writes, drain and close.
#include "server/daemon/socket_server.h"

#include <cerrno>

#include <asio/post.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "server/daemon/unix_listener.h"
#include "server/daemon/log_limiter.h"

namespace ibat::server {

using asio::local::stream_protocol;

namespace {

// How long accepting stays paused when no connection of this socket closes meanwhile (the
// descriptors may be held elsewhere in the process).
constexpr std::chrono::seconds kAcceptRetry{1};

bool out_of_descriptors(const asio::error_code& ec) {
  return ec.category() == asio::system_category() && (ec.value() == EMFILE || ec.value() == ENFILE);
}

}  // namespace

Connection::Connection(SocketServer& server, stream_protocol::socket socket, StreamStyle style)
    : server_(server),
      socket_(std::move(socket)),
      style_(style),
      peer_(read_peer_credentials(socket_.native_handle())),
      shares_(server.shares_of(peer_)),
      in_(style.read_chunk) {}

void Connection::drain() {
  draining_ = true;
  flush();
}

void Connection::abort() {
  if (closed_) return;
  closed_ = true;
  if (server_.users_.ceiling) server_.users_.ceiling->hold(this, peer_.uid, 0);
  on_close();
  asio::error_code ignored;
  socket_.close(ignored);
  server_.forget(this);  // may destroy *this once the handlers holding it return
}

void Connection::read() {
  socket_.async_read_some(asio::buffer(in_), [self = shared_from_this()](asio::error_code ec, std::size_t n) {
    self->on_read(ec, n);
  });
}

void Connection::on_read(asio::error_code ec, std::size_t n) {
  if (closed_) return;
  if (ec) {  // EOF or reset: the client is gone
    abort();
    return;
  }
  if (closing()) return;
  ++server_.counters_.reads;
  if (server_.busy_poll_.enabled())
    asks_again_at_once_ = last_reply_ != BusyPoll::Clock::time_point{} &&
                          server_.busy_poll_.asks_again_at_once(BusyPoll::Clock::now() - last_reply_);
  on_bytes(std::span<const std::uint8_t>(in_.data(), n));
  if (closed_) return;
  flush();
  if (!closing()) read();
}

bool Connection::over_queue_limit() {
  if (closed_ || cut_off_) return true;
  if (queued_bytes_ <= server_.limits_.max_queued_bytes) return false;
  ++server_.counters_.slow_clients;
  cut_off("max_queued_bytes_per_connection");
  return true;
}

void Connection::cut_off(const char* why) {
  if (client_log_limiter().allow(std::string("reader disconnected: ") + why))
    spdlog::warn("{}: disconnecting pid {} uid {}: {} reply bytes unread ({})", server_.name_, peer_.pid, peer_.uid,
                 queued_bytes_, why);
  cut_off_ = true;
  // Deferred: this may run inside a Resolver completion or a request handler.
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->abort(); });
}

// A closed connection may outlive its server (a write's handler holds it): it touches nothing.
bool Connection::report_queued() {
  if (closed_ || cut_off_) return false;
  ReplyCeiling* ceiling = server_.users_.ceiling;
  if (!ceiling) return true;
  ceiling->hold(this, peer_.uid, queued_bytes_);
  const std::optional<ReplyCeiling::Victim> cut = ceiling->take_victim(peer_.uid, shares_);
  if (!cut) return true;
  // const only as a key: every holder is a live connection of one of the daemon's sockets.
  auto* victim = const_cast<Connection*>(cut->connection);
  if (cut->over == ReplyCeiling::Over::uid_share) {
    ++victim->server_.counters_.cut_over_uid_share;
    victim->cut_off("max_queued_bytes_per_uid, and it held the most of its uid");
  } else {
    ++victim->server_.counters_.cut_over_ceiling;
    victim->cut_off("max_queued_bytes_total, and it held the most");
  }
  return victim != this;
}

bool Connection::can_reply() { return !over_queue_limit(); }

bool Connection::take_pending_share() {
  PendingShares* shares = server_.users_.pending;
  UserCounters* users = server_.users_.counters;
  if (!shares || shares->take(peer_.uid, shares_)) {
    ++server_.counters_.pending;
    if (users) users->on_resolve(peer_.uid);
    return true;
  }
  ++server_.counters_.pending_refused_per_uid;
  if (users) users->on_resolve_refused(peer_.uid);
  if (client_log_limiter().allow("request refused per uid"))
    spdlog::warn("{}: refusing a request of pid {} uid {}: the uid has {} pending (max_pending_per_uid)",
                 server_.name_, peer_.pid, peer_.uid, shares->held(peer_.uid));
  return false;
}

void Connection::give_back_pending_share() {
  --server_.counters_.pending;
  if (server_.users_.pending) server_.users_.pending->give_back(peer_.uid);
}

bool Connection::send(std::vector<std::uint8_t> message) {
  if (style_.one_message_per_write || out_.empty()) {
    if (over_queue_limit()) return false;
    queued_bytes_ += message.size();
    out_.push_back(std::move(message));
    return report_queued();
  }
  return send(std::span<const std::uint8_t>(message));
}

bool Connection::send(std::span<const std::uint8_t> message) {
  if (over_queue_limit()) return false;
  queued_bytes_ += message.size();
  if (style_.one_message_per_write || out_.empty()) {
    out_.push_back(std::move(spare_));
    spare_ = {};
  }
  out_.back().insert(out_.back().end(), message.begin(), message.end());
  return report_queued();
}

void Connection::flush() {
  if (closed_ || writing_active_) return;
  if (out_.empty()) {
    if (draining_) abort();
    return;
  }
  writing_.clear();
  if (style_.one_message_per_write || out_.size() == 1) {  // one buffer: hand it over as it is
    writing_.swap(out_.front());
    spare_ = std::move(out_.front());  // the old write buffer, empty, with its capacity
    out_.pop_front();
  } else {
    do {  // everything queued in one write
      writing_.insert(writing_.end(), out_.front().begin(), out_.front().end());
      out_.pop_front();
    } while (!out_.empty());
  }
  writing_active_ = true;
  ++server_.counters_.writes;
  if (server_.busy_poll_.enabled()) {
    last_reply_ = BusyPoll::Clock::now();
    if (asks_again_at_once_) server_.busy_poll_.arm(last_reply_);
  }
  asio::async_write(socket_, asio::buffer(writing_),
                    [self = shared_from_this()](asio::error_code ec, std::size_t) { self->on_written(ec); });
}

void Connection::on_written(asio::error_code ec) {
  writing_active_ = false;
  queued_bytes_ -= writing_.size();
  writing_.clear();
  if (closed_) return;
  report_queued();
  if (ec) {
    abort();
    return;
  }
  flush();
}

SocketServer::SocketServer(asio::io_context& loop, std::string name, SocketCounters& counters, Factory make)
    : loop_(loop),
      busy_poll_(asio::use_service<BusyPoll>(loop)),
      name_(std::move(name)),
      counters_(counters),
      make_(std::move(make)),
      resume_timer_(loop) {}

SocketServer::~SocketServer() { abort_all(); }

void SocketServer::listen(const std::string& path, std::uint32_t mode, const SocketLimits& limits) {
  limits_ = limits;
  acceptor_.emplace(listen_unix(loop_, path, mode));
  path_ = path;
  accept();
}

void SocketServer::accept() {
  acceptor_->async_accept([this](asio::error_code ec, stream_protocol::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_ || !acceptor_->is_open()) return;
    if (out_of_descriptors(ec)) return pause_accepting(ec);  // accepting again would fail at once
    if (!ec && out_of_descriptors_) {
      out_of_descriptors_ = false;
      spdlog::info("{}: accepting connections again", name_);
    }
    if (ec) {
      spdlog::warn("{}: accept failed: {}", name_, ec.message());
    } else if (connections_.size() >= limits_.max_connections) {
      ++counters_.refused;
      if (client_log_limiter().allow("connection refused"))
        spdlog::warn("{}: refusing a connection: {} open (max_connections)", name_, connections_.size());
    } else if (const PeerCredentials peer = read_peer_credentials(socket.native_handle());
               open_of(peer.uid) >= std::uint64_t{limits_.max_connections_per_uid} * shares_of(peer)) {
      ++counters_.refused_per_uid;
      if (users_.counters) users_.counters->on_connection_refused(peer.uid);
      if (client_log_limiter().allow("connection refused per uid"))
        spdlog::warn("{}: refusing a connection of uid {}: it has {} open (max_connections_per_uid)", name_,
                     peer.uid, open_of(peer.uid));
    } else {
      std::shared_ptr<Connection> connection = make_(std::move(socket));
      ++connections_by_uid_[connection->peer().uid];
      if (users_.counters) users_.counters->on_connect(connection->peer().uid);
      connections_.emplace(connection.get(), connection);
      ++counters_.connections_total;
      counters_.connections = connections_.size();
      connection->start();
    }
    accept();
  });
}

void SocketServer::pause_accepting(const asio::error_code& ec) {
  if (!out_of_descriptors_) {
    out_of_descriptors_ = true;
    spdlog::warn("{}: accept failed: {}; not accepting until a connection closes ({} open)", name_, ec.message(),
                 connections_.size());
  }
  paused_ = true;
  resume_timer_.expires_after(kAcceptRetry);
  resume_timer_.async_wait([this](asio::error_code timer_ec) {
    if (!timer_ec) resume_accepting();
  });
}

void SocketServer::resume_accepting() {
  if (!paused_ || !acceptor_) return;
  paused_ = false;
  resume_timer_.cancel();
  accept();
}

std::uint32_t SocketServer::open_of(uid_t uid) const {
  auto it = connections_by_uid_.find(uid);
  return it == connections_by_uid_.end() ? 0 : it->second;
}

void SocketServer::forget(Connection* connection) {
  if (connections_.erase(connection) != 0) {
    auto it = connections_by_uid_.find(connection->peer().uid);
    if (it != connections_by_uid_.end() && --it->second == 0) connections_by_uid_.erase(it);
    if (users_.counters) users_.counters->on_disconnect(connection->peer().uid);
  }
  counters_.connections = connections_.size();
  resume_accepting();  // its descriptor is free again
  if (connections_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
  }
}

std::vector<std::shared_ptr<Connection>> SocketServer::connections() const {
  std::vector<std::shared_ptr<Connection>> all;
  all.reserve(connections_.size());
  for (const auto& [key, c] : connections_) all.push_back(c);
  return all;
}

void SocketServer::stop_accepting() {
  resume_timer_.cancel();
  paused_ = false;
  if (!acceptor_) return;
  asio::error_code ignored;
  acceptor_->close(ignored);
  acceptor_.reset();
  remove_socket_file(path_);
}

void SocketServer::drain(std::function<void()> done) {
  stop_accepting();
  if (connections_.empty()) {
    done();
    return;
  }
  drained_ = std::move(done);
  for (auto& c : connections()) c->drain();
}

void SocketServer::abort_all() {
  drained_ = nullptr;
  stop_accepting();
  for (auto& c : connections()) c->abort();
}

}  // namespace ibat::server
