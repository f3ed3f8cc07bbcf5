// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench: the measurements, each on an open libibat handle.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibat.h"

namespace ibat::bench {

// A run of resolves: how many completed (ok or not) within the timed window, and how long it was.
struct RunResult {
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;                     // error status, or a path with DLID 0
  std::map<std::string, std::uint64_t> errors;  // failed, by ibat_strerror text
  double seconds = 0;
  std::vector<double> latencies_us;  // per request, when the run records them
  double per_second() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
  // Adds another run of the same kind (counts, errors, time, latencies).
  void add(const RunResult& other);
};

// Keeps `depth` resolves with `flags` in flight for `seconds` on one connection and records each
// request's latency. With one_per_target, slot i always asks for targets[i] (depth <= targets), so
// no destination has two requests in flight and FORCE_SA requests cannot be coalesced; otherwise
// slots take the targets round robin. Requests still in flight at the end are drained, not counted.
RunResult run_pipelined(ibat_t* h, const std::vector<ibat_target>& targets, unsigned depth,
                        std::uint32_t flags, double seconds, bool one_per_target);

// Times `samples` synchronous resolves (one in flight at a time), round robin over targets.
RunResult run_sequential(ibat_t* h, const std::vector<ibat_target>& targets, unsigned samples);

// Synchronous resolves of targets round robin for `seconds` on a handle that maps the daemon's
// shared table (hits never reach the socket), untimed (run_sequential times them one by one).
RunResult run_table(ibat_t* h, const std::vector<ibat_target>& targets, double seconds);

// The same keys through ibat_resolve_table: all the targets in one call, for `seconds`.
RunResult run_table_batch(ibat_t* h, const std::vector<ibat_target>& targets, double seconds);

// The baseline of run_table: the same keys looked up in a std::unordered_map of ibat_path filled
// from `paths` (one per target), copying the path out, for `seconds`.
RunResult run_bare_map(const std::vector<ibat_target>& targets, const std::vector<ibat_path>& paths, double seconds);

// The value at quantile q (0..1) of the samples (sorted in place); 0 when empty.
double quantile(std::vector<double>& samples, double q);

// The daemon's STATS listing at one moment (one request).
struct DaemonStats {
  nlohmann::json stats;
  // A top-level counter, 0 if absent.
  std::uint64_t counter(const char* name) const;
  // Seconds ibatd's loop has spent polling instead of sleeping (busy_poll.polled_s; 0 when absent).
  double polled_seconds() const;
};
DaemonStats daemon_stats(ibat_t* h);

}  // namespace ibat::bench
