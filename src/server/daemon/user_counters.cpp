// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// UserCounters (see user_counters.h).
#include "server/daemon/user_counters.h"

#include <algorithm>

namespace ibat::server {

UserCounters::Counts& UserCounters::Counts::operator+=(const Counts& o) {
  resolves += o.resolves;
  resolves_refused += o.resolves_refused;
  connections += o.connections;
  connections_refused += o.connections_refused;
  return *this;
}

UserCounters::Counts& UserCounters::counts(uid_t uid) {
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) return it->second;
  if (by_uid_.size() >= kTrackedUids) return untracked_;
  return by_uid_[uid];
}

// An untracked uid's connection was counted in untracked_ when it opened, and is taken back there.
void UserCounters::on_disconnect(uid_t uid) {
  Counts& c = counts(uid);
  if (c.connections > 0) --c.connections;
}

UserCounters::Top UserCounters::top(std::size_t n) const {
  std::vector<std::pair<uid_t, Counts>> all(by_uid_.begin(), by_uid_.end());
  auto before = [](const std::pair<uid_t, Counts>& a, const std::pair<uid_t, Counts>& b) {
    if (a.second.asked() != b.second.asked()) return a.second.asked() > b.second.asked();
    if (a.second.connections != b.second.connections) return a.second.connections > b.second.connections;
    return a.first < b.first;
  };
  const std::size_t shown = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown), all.end(), before);
  Top out;
  out.others = untracked_;
  for (std::size_t i = shown; i < all.size(); ++i) out.others += all[i].second;
  out.other_uids = all.size() - shown;
  all.resize(shown);
  out.users = std::move(all);
  return out;
}

}  // namespace ibat::server
