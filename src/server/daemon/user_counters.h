// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What each local user (peer uid, from SO_PEERCRED) asks of the daemon's sockets, native and ACM
// together: resolve requests taken in and refused, connections open and refused. Reported for the
// users who asked the most (`ibat stats --json` "server.users", Prometheus ibat_user_*{uid}), so
// that an operator sees who is behind a refusal without one series per uid the host ever had.
// Memory is bounded too: past kTrackedUids distinct uids, a new uid's counts go to "others".
// Pure bookkeeping on the loop thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

namespace ibat::server {

class UserCounters {
 public:
  struct Counts {
    std::uint64_t resolves = 0;             // taken in (handed to a Resolver)
    std::uint64_t resolves_refused = 0;     // answered `overloaded` at once: max_pending_per_uid
    std::uint64_t connections = 0;          // gauge: open now, on either socket
    std::uint64_t connections_refused = 0;  // closed at once: max_connections_per_uid
    std::uint64_t asked() const { return resolves + resolves_refused; }
    Counts& operator+=(const Counts& o);
  };
  struct Top {
    std::vector<std::pair<uid_t, Counts>> users;  // most resolves asked first, uid breaking ties
    Counts others;                                 // every other uid summed, untracked ones included
    std::size_t other_uids = 0;                    // tracked uids in `others`
  };

  void on_resolve(uid_t uid) { ++counts(uid).resolves; }
  void on_resolve_refused(uid_t uid) { ++counts(uid).resolves_refused; }
  void on_connect(uid_t uid) { ++counts(uid).connections; }
  void on_disconnect(uid_t uid);
  void on_connection_refused(uid_t uid) { ++counts(uid).connections_refused; }

  // The `n` uids that asked the most resolves (then: held the most connections), the rest summed.
  Top top(std::size_t n) const;
  std::size_t tracked() const { return by_uid_.size(); }

  // Uids counted one by one; a host with more distinct users than this (since the daemon started)
  // counts the later ones together in `others`: a bound on memory, far above a login node's users.
  static constexpr std::size_t kTrackedUids = 4096;
  // Users reported one by one (stats, Prometheus series labelled uid): enough to name who fills a
  // shared node, few enough that a scrape's series stay bounded.
  static constexpr std::size_t kReportedUids = 10;

 private:
  Counts& counts(uid_t uid);
  std::unordered_map<uid_t, Counts> by_uid_;
  Counts untracked_;
};

}  // namespace ibat::server
