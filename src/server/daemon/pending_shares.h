// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Each peer uid's share of the resolve requests the daemon's sockets (native and ACM together)
// have handed to the Resolvers and not yet seen complete (server.max_pending_per_uid). The
// Resolver's max_pending is one budget for everyone; this share keeps one user, however many
// connections it opens, from taking all of it (docs/security.md §4). Pure bookkeeping: the
// connections take a share before they submit and give it back on completion, cancel or close.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include <sys/types.h>

namespace ibat::server {

class PendingShares {
 public:
  explicit PendingShares(std::uint32_t per_uid) : per_uid_(per_uid) {}
  // A lower share refuses a uid's new requests until its pending ones drop below it.
  void set_limit(std::uint32_t per_uid) { per_uid_ = per_uid; }

  // One more pending request of `uid`, whose share is `shares` x the per-uid limit (root and
  // admin_group may have more than one); false (nothing taken) when it already holds its share.
  bool take(uid_t uid, std::uint32_t shares = 1);
  // One pending request of `uid` completed, was cancelled or its connection closed.
  void give_back(uid_t uid);

  std::uint32_t held(uid_t uid) const;
  std::uint64_t total() const { return total_; }     // every uid together
  std::size_t uids() const { return held_.size(); }  // uids holding any

 private:
  std::uint32_t per_uid_;
  std::uint64_t total_ = 0;
  std::unordered_map<uid_t, std::uint32_t> held_;  // uids with requests pending
};

}  // namespace ibat::server
