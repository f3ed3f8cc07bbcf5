// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Subnet Administrator as OpenSM runs it (docs/simulator.md, "The SA model" and "What the SA
// spends"): a FIFO queue served by `threads` workers, each query costing a per-query overhead plus
// a per-record work (a GET computes one record, a GetTable one per record it returns); an
// unbounded queue; an arriving query is dropped silently (never BUSY) while more than one request
// waits and the last request taken off the queue had waited longer than max_msg_fifo_timeout
// (10 s); a one-way fabric latency; outage windows (SM restart, not yet MASTER) during which
// requests are lost. An optional queue limit models a bounded SA instead. Answers are never late
// on purpose: the caller compares the answer time with its MAD timeout.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "sim/time_series.h"

namespace ibat::sim {

struct SaOptions {
  // Sources in docs/simulator.md: OpenSM serves 20-50k GETs/s, 20 us a GET at 50k/s; ibssa measured
  // 3.33 us per path computed; the rest of a GET is the per-query overhead (dispatch, lock,
  // requester lookup, response MAD).
  std::int64_t query_ns = 17'000;    // per query, whatever it returns
  std::int64_t record_ns = 3'330;    // per record computed
  std::uint32_t threads = 1;         // SA workers taking queries off the one FIFO
  std::uint32_t queue_limit = 0;     // requests in the SA (queued + in service); 0: unbounded
  std::int64_t fifo_timeout_ns = 10'000'000'000;  // OpenSM max_msg_fifo_timeout; 0: never drop
  std::int64_t latency_ns = 5'000;   // one-way fabric latency

  // Work of one query computing `records` records, on one worker.
  std::int64_t work_ns(std::uint32_t records) const { return query_ns + records * record_ns; }
  // GETs per second with every worker busy.
  double get_rate_per_s() const { return threads * 1e9 / static_cast<double>(work_ns(1)); }
  // Scales query_ns and record_ns, their ratio kept, so that one worker serves `gets_per_s` GETs a
  // second (ibat-sim --sa-rate).
  void set_get_rate(double gets_per_s);
};

// One request as the SA spends on it: SaOptions::query_ns, plus SaOptions::record_ns for each of
// its `records`. A GET computes one record; a PathRecord GetTable with the SGID set and the
// destination wildcarded one per end port it returns (osm_pr_process_half), all in one answer; the
// NodeRecord GetTable of the switches that ibatd sends beside it (fabric::SaClient), and the
// SwitchInfoRecord one that sizes the subnet before a first table, compute no path, so each costs
// the per-query overhead alone (both counted as switch tables). GETs are the PathRecords and the monitors'
// SMInfo, InformInfo(Record) and MCMemberRecord (sim/mad_attempts.h).
enum class SaRequest : std::uint8_t { get, path_table, switch_table };

struct SaQuery {
  std::uint32_t records = 1;
  SaRequest kind = SaRequest::get;

  static SaQuery get() { return SaQuery{1, SaRequest::get}; }
  static SaQuery get_table(std::uint32_t records) { return SaQuery{records, SaRequest::path_table}; }
  static SaQuery switch_table() { return SaQuery{0, SaRequest::switch_table}; }
};

struct SaTotals {
  std::uint64_t arrived = 0;  // queries that reached the SA (every MAD attempt)
  std::uint64_t path_tables_arrived = 0;    // of those: PathRecord GetTables
  std::uint64_t switch_tables_arrived = 0;  // of those: the switches' NodeRecord and SwitchInfoRecord GetTables
  std::uint64_t path_tables_dropped = 0;    // PathRecord GetTables dropped (overload or outage)
  std::uint64_t served = 0;   // answered (possibly after the requester gave up)
  std::uint64_t dropped = 0;  // overloaded, queue full or SA unavailable
  std::uint64_t overload_dropped = 0;  // of those: head-of-line wait beyond fifo_timeout, or full
  std::uint64_t records = 0;     // records computed for the served queries
  std::int64_t busy_ns = 0;      // work of the served queries, summed over the workers
};

class SaModel {
 public:
  SaModel(const SaOptions& options, TimeSeries& series);

  // The SA is unavailable in [from, to): arrivals are dropped, queued work is lost.
  void add_outage(std::int64_t from_ns, std::int64_t to_ns);
  // `query`, sent at `sent_ns` (never earlier than a previous submit's): the time its answer
  // reaches the requester, or nullopt if lost. Its work starts when it is first in the FIFO and a
  // worker is free, and takes SaOptions::work_ns(query.records).
  std::optional<std::int64_t> submit(std::int64_t sent_ns, SaQuery query = SaQuery::get());

  const SaTotals& totals() const { return totals_; }
  std::int64_t latency_ns() const { return options_.latency_ns; }
  const SaOptions& options() const { return options_; }

 private:
  struct Accepted {
    std::int64_t start_ns;   // taken off the queue
    std::int64_t finish_ns;
    std::int64_t wait_ns;    // start - arrival
  };
  const std::pair<std::int64_t, std::int64_t>* outage_at_or_after(std::int64_t t) const;
  void take_started_off_the_queue(std::int64_t t);

  SaOptions options_;
  TimeSeries& series_;
  std::vector<std::int64_t> worker_free_ns_;  // when each worker finishes what it was given
  std::deque<Accepted> waiting_;  // accepted requests not yet taken off the queue, in FIFO order
  // Finish times of the requests taken off the queue and not yet finished (at most `threads`).
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> in_service_;
  Accepted last_started_{0, 0, 0};
  std::vector<std::pair<std::int64_t, std::int64_t>> outages_;
  SaTotals totals_;
};

}  // namespace ibat::sim
