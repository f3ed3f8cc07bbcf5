// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Unix-socket server skeleton that ibatd's native and ACM endpoints share: accepting (paused
// while the process is out of file descriptors), peer credentials, max_connections, the connection
// table, one bounded reply queue per connection, each peer uid's share of pending requests, flush,
// drain and close, and the counters of each.
// A protocol subclasses Connection and turns received bytes into replies (on_bytes -> send);
// the limits are in docs/security.md §4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>

#include "server/daemon/busy_poll.h"
#include "server/daemon/json_views.h"
#include "server/daemon/peer_credentials.h"
#include "server/daemon/pending_shares.h"
#include "server/daemon/reply_ceiling.h"
#include "server/daemon/user_counters.h"

namespace ibat::server {

struct SocketLimits {
  std::uint32_t max_connections = 1024;
  std::size_t max_queued_bytes = 4u << 20;  // unsent reply bytes per connection
  std::uint32_t max_connections_per_uid = 512;  // of one peer uid (root included) at once, per share
};

// What the daemon's sockets share about their users, each part optional.
struct SharedUsers {
  ReplyCeiling* ceiling = nullptr;  // unread reply bytes: per uid and in total
  PendingShares* pending = nullptr;  // each uid's share of pending requests
  UserCounters* counters = nullptr;  // counts per uid for ibat stats
  // How many shares a peer gets of each per-uid limit (server.admin_share for root and
  // admin_group); empty: one.
  std::function<std::uint32_t(const PeerCredentials&)> shares_of;
};

// How a protocol reads and writes its stream.
struct StreamStyle {
  std::size_t read_chunk = 64 * 1024;  // bytes asked of one read
  bool one_message_per_write = false;  // ACM clients read each reply with a single recv()
};

class SocketServer;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(SocketServer& server, asio::local::stream_protocol::socket socket, StreamStyle style);
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start() { read(); }
  // Stop reading, send what is queued, then close.
  void drain();
  // Close now; the protocol cancels what it has in flight (on_close), nothing more is sent.
  void abort();

 protected:
  // The protocol's part: handle received bytes, queueing replies with send(). May call drain()
  // (after a final reply) or abort().
  virtual void on_bytes(std::span<const std::uint8_t> bytes) = 0;
  // Runs once when the connection closes, before the socket does.
  virtual void on_close() {}

  // Every reply passes here. A client whose unsent replies already exceed the cap is cut off
  // (counted in slow_clients) and the reply is dropped; so is any reply once the connection is
  // closed or cut off. One reply may exceed the cap on its own (a listing): what is refused is
  // queueing more on top of a full queue.
  // Unless the style wants one message per write, replies queued together share one buffer.
  bool send(std::vector<std::uint8_t> message);
  bool send(std::span<const std::uint8_t> message);  // copies: for a caller reusing its buffer
  // Whether a reply would still be queued: call before starting work for a request, so a client
  // over its cap gets no work done either (cuts it off like send()).
  bool can_reply();
  // Before a request goes to the Resolver: takes one of the peer uid's pending share, or, when the
  // uid holds all of it, counts the refusal (pending_refused_per_uid) and returns false: the
  // protocol answers `overloaded` at once. Every share taken is given back exactly once, when the
  // request completes or is cancelled (a close cancels). No PendingShares: always true.
  bool take_pending_share();
  void give_back_pending_share();
  // Hands queued replies to the socket (send() only queues).
  void flush();
  // Closed, cut off or draining: no more requests are taken.
  bool closing() const { return closed_ || cut_off_ || draining_; }

  const PeerCredentials& peer() const { return peer_; }
  SocketServer& socket_server() { return server_; }

 private:
  friend class SocketServer;  // counts connections by peer()'s uid
  void read();
  void on_read(asio::error_code ec, std::size_t n);
  void on_written(asio::error_code ec);
  bool over_queue_limit();
  // Tells the daemon's ReplyCeiling what this connection holds now, and cuts the connection
  // holding the most when that puts the daemon over it. False: this one was cut.
  bool report_queued();
  void cut_off(const char* why);  // closes soon: the replies queued are dropped

  SocketServer& server_;
  asio::local::stream_protocol::socket socket_;
  StreamStyle style_;
  PeerCredentials peer_;
  std::uint32_t shares_;  // of each per-uid limit (SharedUsers::shares_of)
  std::vector<std::uint8_t> in_;
  std::deque<std::vector<std::uint8_t>> out_;  // replies not yet handed to the socket
  std::vector<std::uint8_t> writing_;          // the buffer of the write in flight
  std::vector<std::uint8_t> spare_;            // an empty buffer that kept its capacity, for out_
  std::size_t queued_bytes_ = 0;               // in out_ and writing_
  BusyPoll::Clock::time_point last_reply_{};   // when the last write started (BusyPoll only)
  bool asks_again_at_once_ = false;            // its last request came within the BusyPoll window
  bool writing_active_ = false;
  bool draining_ = false;  // no more requests; close once everything is written
  bool cut_off_ = false;   // over the reply-queue cap: closing
  bool closed_ = false;
};

class SocketServer {
 public:
  using Factory = std::function<std::shared_ptr<Connection>(asio::local::stream_protocol::socket)>;

  // `name` prefixes log lines ("native", "acm").
  SocketServer(asio::io_context& loop, std::string name, SocketCounters& counters, Factory make);
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Binds `path` (replacing a stale socket file, refusing a live one), sets `mode` on it and
  // starts accepting. Throws std::runtime_error naming the path on failure.
  void listen(const std::string& path, std::uint32_t mode, const SocketLimits& limits);
  void set_limits(const SocketLimits& limits) { limits_ = limits; }
  // What the daemon's sockets share about their users (none set: no ceiling, no shares, not counted).
  void set_users(const SharedUsers& users) { users_ = users; }

  // Stops accepting and removes the socket file; every connection flushes what it has queued and
  // closes. `done` runs once all are closed.
  void drain(std::function<void()> done);
  // Stops accepting and closes everything at once.
  void abort_all();

  std::size_t connection_count() const { return connections_.size(); }
  std::vector<std::shared_ptr<Connection>> connections() const;

 private:
  friend class Connection;
  void accept();
  void pause_accepting(const asio::error_code& ec);
  void resume_accepting();
  void stop_accepting();
  void forget(Connection* connection);
  std::uint32_t open_of(uid_t uid) const;  // connections of `uid` open on this socket
  std::uint32_t shares_of(const PeerCredentials& peer) const { return users_.shares_of ? users_.shares_of(peer) : 1; }

  asio::io_context& loop_;
  BusyPoll& busy_poll_;
  std::string name_;
  SocketCounters& counters_;
  Factory make_;
  SocketLimits limits_;
  SharedUsers users_;
  std::string path_;
  std::optional<asio::local::stream_protocol::acceptor> acceptor_;
  // Out of descriptors: no accept is armed until a connection closes (or the timer retries).
  asio::steady_timer resume_timer_;
  bool paused_ = false;
  bool out_of_descriptors_ = false;  // since the last successful accept: log once per episode
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections_;
  std::unordered_map<uid_t, std::uint32_t> connections_by_uid_;  // uids with connections open
  std::function<void()> drained_;
};

}  // namespace ibat::server
