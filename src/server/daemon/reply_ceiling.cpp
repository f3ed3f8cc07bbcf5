// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ReplyCeiling (see reply_ceiling.h).
#include "server/daemon/reply_ceiling.h"

namespace ibat::server {

std::size_t ReplyCeiling::held_by(uid_t uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second;
}

void ReplyCeiling::hold(const Connection* connection, uid_t uid, std::size_t bytes) {
  auto it = held_.find(connection);
  const std::size_t before = it == held_.end() ? 0 : it->second.bytes;
  total_ = total_ - before + bytes;
  std::size_t& of_uid = by_uid_[uid];
  of_uid = of_uid - before + bytes;
  if (of_uid == 0) by_uid_.erase(uid);
  if (bytes == 0) {
    if (it != held_.end()) held_.erase(it);
  } else if (it == held_.end()) {
    held_.emplace(connection, Held{uid, bytes});
  } else {
    it->second.bytes = bytes;
  }
}

// Scans of the holders, only when over a bound (a rare event for a daemon whose clients read).
std::optional<ReplyCeiling::Victim> ReplyCeiling::take_victim(uid_t uid, std::uint32_t shares) {
  if (held_by(uid) > per_uid_ * shares) return Victim{take_largest(true, uid), Over::uid_share};
  if (total_ > limit_ && !held_.empty()) return Victim{take_largest(false, uid), Over::ceiling};
  return std::nullopt;
}

const Connection* ReplyCeiling::take_largest(bool of_uid_only, uid_t uid) {
  auto largest = held_.end();
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (of_uid_only && it->second.uid != uid) continue;
    if (largest == held_.end() || it->second.bytes > largest->second.bytes) largest = it;
  }
  const Connection* victim = largest->first;
  hold(victim, largest->second.uid, 0);
  return victim;
}

}  // namespace ibat::server
