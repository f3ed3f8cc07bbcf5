// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Resolver: the deterministic heart of ibat. It owns the path cache and the neighbour table,
// queues resolve requests, coalesces them into at most one SA query per key, serves stale and
// provisional entries through SM events, and completes every accepted request exactly once.
// Inputs: resolve/cancel, query results, fabric and neighbour events, tick(). Outputs: completions
// and PathQuery objects through the QuerySink. No I/O, no threads: time comes from the Clock.
// Where the methods live: resolver.cpp (resolve, cancel, cancel_all, tick, next_wakeup, stats,
// policy, set_policy), resolver_jobs.cpp (on_query_result), resolver_tables.cpp (on_table_result),
// resolver_events.cpp (the fabric and
// neighbour events, flush_all, flush, load_stale, entries, neighbours); resolver_impl.h is the
// private state they share.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/fabric_input.h"
#include "core/policy.h"
#include "core/query_sink.h"
#include "core/resolve_types.h"
#include "core/stats.h"
#include "core/types.h"

namespace ibat::core {

using Completion = std::function<void(RequestId, const ResolveResult&)>;

// A cached path that changed under its users (the WATCH `path` event, docs/protocol.md): an SA
// answer moved its DLID or confirmed a provisional path, or the path was lost (the SA has none,
// trap 65). Revalidation that finds the same DLID, and paths turning stale, are not reported.
struct PathChange {
  Gid sgid;
  Gid dgid;
  Pkey pkey;
  EntryState old_state = EntryState::valid;
  EntryState state = EntryState::valid;
  Lid old_dlid;
  Lid dlid;  // 0 when `state` has no path
};
using PathObserver = std::function<void(const PathChange&)>;

// A path the Resolver has just taken as valid from the SA (a GET's answer or a GetTable's record),
// routine revalidation included: what a mirror of the valid entries (the shared table) publishes.
struct PathStored {
  Gid sgid;
  Gid dgid;
  Pkey pkey;
  PathRecord path;
  TimePoint produced;
};
using StoreObserver = std::function<void(const PathStored&)>;

class Resolver final : public FabricInput {
 public:
  // `seed` drives the jitter of backoff and revalidation (same seed, same schedule).
  Resolver(const Policy& policy, const Clock& clock, QuerySink& sink, std::uint64_t seed = 1);
  // Does not complete pending requests: call cancel_all() first. Completions must not throw.
  ~Resolver() override;
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // Accepts a request; `done` is called exactly once, possibly before resolve() returns
  // (cache hit, immediate error). Returns the id usable with cancel().
  RequestId resolve(const ResolveRequest& request, Completion done);
  // Completes the request with `cancelled` if still pending. Returns false if unknown/finished.
  bool cancel(RequestId id);
  // Completes every pending request with `error`: `cancelled` at shutdown, `unreachable` when the
  // port itself is gone.
  void cancel_all(Error error = Error::cancelled);

  // The fabric's inputs (core/fabric_input.h). A GetTable's answer fills and refreshes the cache;
  // on an error the paths are asked by GET, as without prefetch. An SM change makes every entry
  // stale; a port report detects LID change, port down and up.
  void on_query_result(QueryId id, const QueryResult& result) override;
  void on_table_result(QueryId id, const TableResult& result) override;
  void on_subnet_size(QueryId id, const SubnetSizeResult& result) override;
  void on_local_port(const LocalPort& port) override;
  void on_sm_changed() override;
  void on_gid_out_of_service(const Gid& gid) override;
  void on_gid_in_service(const Gid& gid) override;
  void on_broadcast_params(const BroadcastParams& params) override;
  // Called, like completions, once the Resolver is consistent again (it may re-enter).
  void set_path_observer(PathObserver observer);
  // Called for every path stored as valid, before the completions the same answer brings.
  void set_store_observer(StoreObserver observer);
  // Request ids start at `first` (ids of several Resolvers behind one front end never meet).
  // Call before the first resolve().
  void use_request_ids_from(RequestId first);

  // Neighbour input (ARP reply, netlink, `ibat neigh add`). source_lid: seen on receive, if known.
  void on_neighbour(const IpAddr& ip, const HwAddr& hw, std::optional<Lid> source_lid = std::nullopt);
  bool on_neighbour_removed(const IpAddr& ip);  // false: there was no entry for ip
  bool knows_neighbour(const IpAddr& ip) const;

  // Both return how many cache entries they dropped.
  std::size_t flush_all();
  std::size_t flush(const Gid& dgid, std::optional<Pkey> pkey = std::nullopt);

  // Load entries (e.g. from a snapshot) as stale; they are revalidated in the background.
  void load_stale(const std::vector<CacheEntryView>& entries);

  // Drives timeouts, retries, TTL expiry and revalidation. Call at least every next_wakeup().
  void tick();
  // The earliest time at which tick() has work to do (nullopt: nothing scheduled).
  std::optional<TimePoint> next_wakeup() const;

  Stats stats() const;
  std::vector<CacheEntryView> entries() const;
  // Up to `limit` entries from `cursor` on (0: the start), in no particular order, and the cursor
  // of the next page (nullopt: this was the last). An entry that stays cached while a listing is
  // walked page by page appears exactly once.
  struct EntryPage {
    std::vector<CacheEntryView> entries;
    std::optional<std::uint32_t> next;
  };
  EntryPage entries_page(std::uint32_t cursor, std::size_t limit) const;
  struct NeighbourView { IpAddr ip; HwAddr hw; std::optional<Lid> source_lid; };
  std::vector<NeighbourView> neighbours() const;
  // Sizes of the tables that client requests fill (bounds in docs/security.md).
  struct TableSizes {
    std::size_t pending = 0;       // requests waiting (<= Policy::max_pending)
    std::size_t deadlines = 0;     // deadline-list entries (one per pending request)
    std::size_t jobs = 0;          // queries wanted: by waiters, or for the cache
    std::size_t queued = 0;        // send-queue items (<= 2 x jobs + 64)
    std::size_t lid_failures = 0;  // negative answers of resolve-by-LID (<= Policy::capacity)
    std::size_t outbox = 0;        // room kept for completions and queries between calls (bounded)
  };
  TableSizes table_sizes() const;
  const Policy& policy() const;
  void set_policy(const Policy& policy);  // SIGHUP reload

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibat::core
