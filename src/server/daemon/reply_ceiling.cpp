// ReplyCeiling (see reply_ceiling.h).
#include "server/daemon/reply_ceiling.h"

namespace ibat::server {

void ReplyCeiling::hold(const Connection* connection, std::size_t bytes) {
  auto it = held_.find(connection);
  const std::size_t before = it == held_.end() ? 0 : it->second;
  total_ = total_ - before + bytes;
  if (bytes == 0) {
    if (it != held_.end()) held_.erase(it);
  } else if (it == held_.end()) {
    held_.emplace(connection, bytes);
  } else {
    it->second = bytes;
  }
}

// A scan of the holders, only when over the ceiling (a rare event for a daemon whose clients read).
const Connection* ReplyCeiling::take_largest_if_over() {
  if (total_ <= limit_ || held_.empty()) return nullptr;
  auto largest = held_.begin();
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (it->second > largest->second) largest = it;
  }
  const Connection* victim = largest->first;
  total_ -= largest->second;
  held_.erase(largest);
  return victim;
}

}  // namespace ibat::server
