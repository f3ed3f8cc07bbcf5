// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The values the Resolver takes and gives: entry states, resolve requests and results, the local
// port and IPoIB broadcast parameters it is told about, and the cache entry view it shows. Shared
// by the Resolver, the path cache, fabric/, protocol/ and client/ without the Resolver class.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "core/clock.h"
#include "core/qos_key.h"
#include "core/types.h"

namespace ibat::core {

enum class EntryState : std::uint8_t { resolving, valid, stale, provisional, failed, gone };
std::string_view to_string(EntryState s);

// What last stored a cache entry's path, kept beside it (one byte) so that `ibat resolve` can say
// where a path came from; its time is the entry's `produced`. The values are the protocol's (the
// path reply's origin byte, docs/protocol.md): never renumber.
enum class PathOrigin : std::uint8_t {
  unknown = 0,     // no path yet, or an ibatd that does not say
  sa_table = 1,    // the port's subnet PathRecord GetTable (prefetch, revalidation after an SM change)
  sa_get = 2,      // a single PathRecord GET (a miss, a revalidation, force-SA)
  warm_cache = 3,  // the warm cache file read at start, not revalidated since
  neighbour = 4,   // built from an ARP / neighbour source LID (a provisional path)
};
// "sa-table", "sa-get", "warm-cache", "neighbour", "unknown".
std::string_view to_string(PathOrigin o);

using RequestId = std::uint64_t;
using Target = std::variant<Gid, Lid, IpAddr, HwAddr>;

struct ResolveRequest {
  Target target;
  std::optional<Gid> sgid;         // default: the local port GID
  std::optional<Pkey> pkey;        // default: Policy::default_pkey
  std::optional<Duration> timeout; // default: Policy::request_timeout; capped by max_request_timeout
  bool cache_only = false;         // never query the SA; miss -> no_record at once
  bool force_sa = false;           // ignore the cached answer, query and wait for a fresh one
  // What the SM's QoS policy may answer by: kept in the cache key when Policy singles it out
  // (core/qos_key.h), else the default path serves.
  std::optional<std::uint64_t> service_id;
  std::optional<std::uint16_t> qos_class;  // 12 bits
  std::optional<std::uint8_t> tclass;      // never a policy criterion: echoed in the answer
  // Who asks: the peer uid of a socket client; nullopt for the kernel and the daemon itself. The
  // waited GETs are sent round robin among requesters (core/fair_queue.h).
  std::optional<std::uint32_t> requester;
};

struct ResolveResult {
  Error error = Error::ok;
  PathRecord path;                 // is_servable() (never DLID 0) when error == ok
  EntryState state = EntryState::valid;  // valid, stale or provisional when error == ok
  Duration age{0};                 // time since the SA (or ARP) produced this path
  PathOrigin origin = PathOrigin::unknown;  // what stored the cached path (at `age`)
  std::uint8_t key_qos_fields = 0;          // the cache key's QosKey::fields: path.service_id / qos_class are the key's
};

// What the port monitor knows about the local port.
struct LocalPort {
  Gid gid;
  Lid lid;
  Lid sm_lid;
  bool active = false;
  // The physical link is down (cable out, HCA port disabled): its requests fail `unreachable` at
  // once. A port that is up but not active (the SM sweeping) makes uncached requests wait instead.
  bool link_down = false;
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
  QosKey qos;  // default: the destination's default path
  EntryState state;
  PathRecord path;  // meaningful for valid/stale/provisional
  Duration age{0};
  Duration idle{0};
  Error last_error = Error::ok;
  PathOrigin origin = PathOrigin::unknown;
};

}  // namespace ibat::core
