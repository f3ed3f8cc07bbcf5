// One ceiling on the reply bytes the daemon's clients leave unread, across every connection of
// both sockets (server.max_queued_bytes_total). Each connection has its own cap as well, but many
// clients that each stay under theirs could together make ibatd hold gigabytes; past the ceiling
// the connection holding the most is cut first (docs/security.md §4). Pure bookkeeping: the
// connections report what they hold, the socket code does the cutting.
#pragma once

#include <cstddef>
#include <unordered_map>

namespace ibat::server {

class Connection;

class ReplyCeiling {
 public:
  explicit ReplyCeiling(std::size_t limit) : limit_(limit) {}
  void set_limit(std::size_t limit) { limit_ = limit; }
  std::size_t limit() const { return limit_; }
  std::size_t total() const { return total_; }

  // The reply bytes `connection` now holds queued (0: none, or it closed).
  void hold(const Connection* connection, std::size_t bytes);
  // Over the ceiling: the connection holding the most, whose bytes leave the total now (it is
  // being cut and holds nothing from here on); else nullptr.
  const Connection* take_largest_if_over();

 private:
  std::size_t limit_;
  std::size_t total_ = 0;
  std::unordered_map<const Connection*, std::size_t> held_;  // connections holding bytes
};

}  // namespace ibat::server
