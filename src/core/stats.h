// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Counters the Resolver keeps; exported by `ibat stats`, Prometheus text and the ACM PERF_QUERY.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <cstdint>

namespace ibat::core {

struct Stats {
  std::uint64_t resolves = 0;          // accepted resolve requests
  std::uint64_t cache_hits = 0;        // answered from a valid entry
  std::uint64_t stale_hits = 0;        // answered from a stale entry (revalidation pending)
  std::uint64_t provisional_hits = 0;  // answered from a provisional (ARP-built) entry
  std::uint64_t stale_holds = 0;       // held on a stale entry for its fresh answer: our LID moved
  std::uint64_t stale_fallbacks = 0;   // of those (or while their revalidation backs off): old path served
  std::uint64_t misses = 0;            // had to wait for a query
  std::uint64_t coalesced = 0;         // waited on a query already in flight
  std::uint64_t sa_queries = 0;        // PathQuery objects sent (retries included)
  std::uint64_t sa_retries = 0;
  std::uint64_t sa_timeouts = 0;
  std::uint64_t sa_errors = 0;         // no_record / invalid answers
  std::uint64_t rejected_paths = 0;    // SA answers refused as not servable (DLID 0, bad MTU ...)
  std::uint64_t revalidations = 0;
  std::uint64_t sa_tables = 0;           // GetTables sent (prefetch, revalidation after SM/LID change)
  std::uint64_t sa_tables_answered = 0;  // of those, answered and read
  std::uint64_t sa_tables_failed = 0;    // of those, not usable (refused, timed out): GETs instead
  std::uint64_t sa_probes = 0;           // the table gate's probes of the SA's queue (core/table_gate.h)
  std::uint64_t table_paths = 0;         // paths a GetTable filled in or refreshed
  std::uint64_t table_skipped = 0;       // its paths left out: cache full, or not servable
  std::array<std::uint64_t, 8> failures_by_reason{};  // indexed by core::Error
  std::uint64_t failures = 0;          // sum of failures_by_reason
  std::uint64_t evictions = 0;
  std::uint64_t entries = 0;           // gauge
  std::uint64_t pending = 0;           // gauge: requests waiting
  std::uint64_t inflight = 0;          // gauge: queries in flight
  std::uint64_t sm_changes = 0;
  std::uint64_t lid_changes = 0;
  std::uint64_t neighbours = 0;        // gauge
  std::uint64_t sa_window = 0;         // gauge: queries the SaPacer lets be in flight now
  // gauge: the most waited GETs sent for other requesters ahead of a requester's only queued GET
  // (core::FairQueue::lone_wait_max): fair turns bound it by the requesters waiting, less one
  std::uint64_t sa_turns_waited_max = 0;

  // A host's total over its ports. Every counter and gauge adds up except `neighbours`: each port
  // holds the same neighbour table, so the total keeps one port's count; and the high-water mark
  // `sa_turns_waited_max`, whose total is the largest port's.
  Stats& operator+=(const Stats& o) {
    for (std::size_t i = 0; i < failures_by_reason.size(); ++i) failures_by_reason[i] += o.failures_by_reason[i];
    for (auto [mine, theirs] : {std::pair{&resolves, &o.resolves}, {&cache_hits, &o.cache_hits},
                                {&stale_hits, &o.stale_hits}, {&provisional_hits, &o.provisional_hits},
                                {&stale_holds, &o.stale_holds}, {&stale_fallbacks, &o.stale_fallbacks},
                                {&misses, &o.misses}, {&coalesced, &o.coalesced}, {&sa_queries, &o.sa_queries},
                                {&sa_retries, &o.sa_retries}, {&sa_timeouts, &o.sa_timeouts},
                                {&sa_errors, &o.sa_errors}, {&rejected_paths, &o.rejected_paths},
                                {&revalidations, &o.revalidations}, {&sa_tables, &o.sa_tables},
                                {&sa_tables_answered, &o.sa_tables_answered},
                                {&sa_tables_failed, &o.sa_tables_failed}, {&sa_probes, &o.sa_probes},
                                {&table_paths, &o.table_paths},
                                {&table_skipped, &o.table_skipped}, {&failures, &o.failures},
                                {&evictions, &o.evictions}, {&entries, &o.entries}, {&pending, &o.pending},
                                {&inflight, &o.inflight}, {&sm_changes, &o.sm_changes},
                                {&lid_changes, &o.lid_changes}, {&sa_window, &o.sa_window}})
      *mine += *theirs;
    neighbours = std::max(neighbours, o.neighbours);
    sa_turns_waited_max = std::max(sa_turns_waited_max, o.sa_turns_waited_max);
    return *this;
  }
};

}  // namespace ibat::core
