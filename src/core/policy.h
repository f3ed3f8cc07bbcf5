// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Every tunable of the Resolver, with its documented default. The daemon fills it from TOML.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "core/clock.h"
#include "core/qos_key.h"
#include "core/types.h"

namespace ibat::core {

using namespace std::chrono_literals;

// Whether a port's whole subnet is asked in one GetTable when the port becomes usable and after
// every SM change (docs/design.md, "Admission of a port's SA traffic, as states"), or paths are asked one GET at a time on use.
enum class Prefetch { off, subnet };
std::string_view to_string(Prefetch p);                          // "off", "subnet"
std::optional<Prefetch> prefetch_from_string(std::string_view s);  // the same names

struct Policy {
  Duration path_ttl = 15min;            // a valid entry becomes stale (served, revalidated) after this
  double revalidate_per_s = 200.0;      // revalidation queries per second after an SM change
  Duration revalidate_jitter = 2s;      // spread of the first revalidation after an SM change
  std::uint32_t sa_max_inflight = 64;   // queries in flight per port
  double sa_rate = 1000.0;              // new queries per second (token bucket rate)
  std::uint32_t sa_burst = 100;         // token bucket depth
  bool sa_adaptive = true;              // pace GETs by the SA's round trips and losses (SaPacer); false: the bucket alone
  Duration retry_base = 250ms;          // first retry delay after a failed query
  Duration retry_max = 8s;              // cap of the exponential backoff
  std::uint32_t retry_count = 4;        // query-level retries before the key is failed
  double retry_jitter = 0.25;           // +/- fraction applied to each backoff
  Duration negative_ttl = 5s;           // how long a failed key answers its error at once
  std::uint32_t capacity = 100'000;     // cache entries; idle entries beyond this are LRU-evicted
  std::uint32_t max_waiters_per_key = 1024;
  std::uint32_t max_pending = 65'536;   // requests waiting in total
  Duration request_timeout = 5s;        // default deadline of a resolve request
  Duration max_request_timeout = 60s;   // cap of the deadline a client asks for
  Duration provisional_ttl = 30s;       // how long an ARP-built path may be served without an SA answer
  Pkey default_pkey{0xFFFF};
  Prefetch prefetch = Prefetch::subnet;  // one GetTable per (port, SM): the subnet on default_pkey
  // The SA's speed, in paths of a GetTable per second, that the in-use window assumes: after the SM
  // moved the LIDs, every host renews the paths it used in the last minute by GET at its place in
  // a window of n hosts x its paths in use at this speed, ahead of the tables (core/in_use_window.h,
  // docs/design.md "Admission"). The one admission rule that assumes an SA speed: too high a value
  // squeezes the renewals together and lets the tables in among them (old DLIDs served longer);
  // too low spreads them thinner than the SA needs. It also decides whether an unknown subnet's
  // size is asked first (0: no window, never asked). Config key in_use_window_paths_per_s
  // (table_spread_paths_per_s, its name before 0.2.0, is still read).
  double in_use_window_paths_per_s = 250'000.0;
  // The subnet's end ports as the operator knows them, for a port that has not yet learnt them
  // from a table or a warm cache (a diskless host's first start): 0, unknown, asks at once.
  std::uint32_t expected_subnet_ports = 0;
  // The ServiceIDs and QoS classes the SM's QoS policy may single out (core/qos_key.h): a resolve
  // naming one is cached apart and asked with it. Any other shares the default path, so that the
  // per-process ServiceIDs of an MPI job over rdma_cm cost no query of their own.
  std::vector<IdRange> qos_service_ids = standard_ulp_service_ids();
  std::vector<IdRange> qos_classes = every_qos_class();  // [] : every class shares the default path

  // Empty string when consistent, else a message naming the bad field and its accepted range.
  std::string validate() const;
};

}  // namespace ibat::core
