// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PendingShares (see pending_shares.h).
#include "server/daemon/pending_shares.h"

namespace ibat::server {

bool PendingShares::take(uid_t uid, std::uint32_t shares) {
  auto [it, inserted] = held_.try_emplace(uid, 0);
  if (it->second >= std::uint64_t{per_uid_} * shares) return false;  // not a new entry: a share is at least 1
  ++it->second;
  ++total_;
  return true;
}

void PendingShares::give_back(uid_t uid) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;  // holds nothing: no underflow
  --total_;
  if (--it->second == 0) held_.erase(it);
}

std::uint32_t PendingShares::held(uid_t uid) const {
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second;
}

}  // namespace ibat::server
