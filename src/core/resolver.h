// The Resolver: the deterministic heart of ibat. It owns the path cache and the endpoint table,
// queues resolve requests, coalesces them into at most one SA query per key, serves stale and
// provisional entries through SM events, and completes every accepted request exactly once.
// Inputs: resolve/cancel, query results, fabric and neighbour events, tick(). Outputs: completions
// and PathQuery objects through the QuerySink. No I/O, no threads: time comes from the Clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/policy.h"
#include "core/query_sink.h"
#include "core/stats.h"
#include "core/types.h"

namespace ibat::core {

enum class EntryState : std::uint8_t { resolving, valid, stale, provisional, failed, gone };
std::string_view to_string(EntryState s);

using RequestId = std::uint64_t;
using Target = std::variant<Gid, Lid, IpAddr, HwAddr>;

struct ResolveRequest {
  Target target;
  std::optional<Gid> sgid;         // default: the local port GID
  std::optional<Pkey> pkey;        // default: Policy::default_pkey
  std::optional<Duration> timeout; // default: Policy::request_timeout
  bool cache_only = false;         // never query the SA; miss -> no_record at once
  bool force_sa = false;           // ignore the cached answer, query and wait for a fresh one
};

struct ResolveResult {
  Error error = Error::ok;
  PathRecord path;                 // servable (DESIGN invariant 3) when error == ok
  EntryState state = EntryState::valid;  // valid, stale or provisional when error == ok
  Duration age{0};                 // time since the SA (or ARP) produced this path
};

using Completion = std::function<void(RequestId, const ResolveResult&)>;

// What the port monitor knows about the local port.
struct LocalPort {
  Gid gid;
  Lid lid;
  Lid sm_lid;
  bool active = false;
};

// IPoIB broadcast-group parameters, used to build provisional paths from ARP source LIDs.
struct BroadcastParams {
  Pkey pkey;
  std::uint8_t mtu = 0;   // code
  std::uint8_t rate = 0;  // code
  std::uint8_t sl = 0;
  std::uint8_t pkt_life = 0;
};

// One entry as shown by `ibat paths` and written to the snapshot.
struct CacheEntryView {
  Gid sgid;
  Gid dgid;
  Pkey pkey;
  EntryState state;
  PathRecord path;  // meaningful for valid/stale/provisional
  Duration age{0};
  Duration idle{0};
  Error last_error = Error::ok;
};

class Resolver {
 public:
  // `seed` drives the jitter of backoff and revalidation (same seed, same schedule).
  Resolver(const Policy& policy, const Clock& clock, QuerySink& sink, std::uint64_t seed = 1);
  // Does not complete pending requests: call cancel_all() first. Completions must not throw.
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // Accepts a request; `done` is called exactly once, possibly before resolve() returns
  // (cache hit, immediate error). Returns the id usable with cancel().
  RequestId resolve(const ResolveRequest& request, Completion done);
  // Completes the request with `cancelled` if still pending. Returns false if unknown/finished.
  bool cancel(RequestId id);
  // Completes every pending request with `cancelled` (shutdown).
  void cancel_all();

  void on_query_result(QueryId id, const QueryResult& result);

  // Fabric events.
  void on_local_port(const LocalPort& port);  // detects LID change / port down / up
  void on_sm_changed();                       // SM restart or fail-over: all entries -> stale
  void on_gid_out_of_service(const Gid& gid); // trap 65
  void on_gid_in_service(const Gid& gid);     // trap 64
  void on_broadcast_params(const BroadcastParams& params);

  // Neighbour input (ARP reply, netlink, `ibat neigh add`). source_lid: seen on receive, if known.
  void on_neighbour(const IpAddr& ip, const HwAddr& hw, std::optional<Lid> source_lid = std::nullopt);
  bool on_neighbour_removed(const IpAddr& ip);  // false: there was no entry for ip

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
  struct NeighbourView { IpAddr ip; HwAddr hw; std::optional<Lid> source_lid; };
  std::vector<NeighbourView> neighbours() const;
  const Policy& policy() const;
  void set_policy(const Policy& policy);  // SIGHUP reload

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibat::core
