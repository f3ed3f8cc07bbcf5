// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The reply bytes the daemon's clients leave unread, across every connection of both sockets,
// bounded twice: each uid's share (server.max_queued_bytes_per_uid, times the uid's shares) and one
// ceiling for the daemon (server.max_queued_bytes_total). Each connection has its own cap as well,
// but many connections that each stay under theirs could together make ibatd hold gigabytes, or
// let one user's push another user's slow reader over the ceiling. Past a uid's share that uid's
// connection holding the most is cut; past the ceiling, the connection holding the most of all
// (docs/security.md §4). Pure bookkeeping: the connections report what they hold, the socket code
// does the cutting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include <sys/types.h>

namespace ibat::server {

class Connection;

class ReplyCeiling {
 public:
  enum class Over { uid_share, ceiling };
  struct Victim {
    const Connection* connection;
    Over over;  // which bound it was cut for
  };

  ReplyCeiling(std::size_t limit, std::size_t per_uid) : limit_(limit), per_uid_(per_uid) {}
  void set_limits(std::size_t limit, std::size_t per_uid) {
    limit_ = limit;
    per_uid_ = per_uid;
  }
  std::size_t limit() const { return limit_; }
  std::size_t total() const { return total_; }
  std::size_t held_by(uid_t uid) const;

  // The reply bytes `connection`, of peer `uid`, now holds queued (0: none, or it closed).
  void hold(const Connection* connection, uid_t uid, std::size_t bytes);
  // After `uid` held more: the connection to cut, whose bytes leave the totals now (it is being
  // cut and holds nothing from here on). Over `uid`'s share (`shares` x per_uid): that uid's
  // connection holding the most; else over the ceiling: the connection holding the most of all;
  // else none.
  std::optional<Victim> take_victim(uid_t uid, std::uint32_t shares);

 private:
  struct Held {
    uid_t uid;
    std::size_t bytes;
  };
  const Connection* take_largest(bool of_uid_only, uid_t uid);

  std::size_t limit_;
  std::size_t per_uid_;
  std::size_t total_ = 0;
  std::unordered_map<const Connection*, Held> held_;  // connections holding bytes
  std::unordered_map<uid_t, std::size_t> by_uid_;      // uids holding bytes
};

}  // namespace ibat::server
