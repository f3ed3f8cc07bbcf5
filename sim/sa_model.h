// The Subnet Administrator as one FIFO server: a fixed service time per PathRecord (1/rate), a
// queue limit past which arriving requests are dropped, a one-way fabric latency, and outage
// windows (SM restart, SA unavailable) during which requests are lost. Answers are never late on
// purpose: the caller compares the answer time with its MAD timeout.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/time_series.h"

namespace ibat::sim {

struct SaOptions {
  double rate_per_s = 50'000.0;      // PathRecords served per second (OpenSM's published figure)
  std::uint32_t queue_limit = 4096;  // requests in the SA (queued + in service); more are dropped
  std::int64_t latency_ns = 5'000;   // one-way fabric latency
};

struct SaTotals {
  std::uint64_t arrived = 0;  // queries that reached the SA (every MAD attempt)
  std::uint64_t served = 0;   // answered (possibly after the requester gave up)
  std::uint64_t dropped = 0;  // queue full or SA unavailable
};

class SaModel {
 public:
  SaModel(const SaOptions& options, TimeSeries& series);

  // The SA is unavailable in [from, to): arrivals are dropped, queued work is lost.
  void add_outage(std::int64_t from_ns, std::int64_t to_ns);
  // A request sent at `sent_ns`: the time its answer reaches the requester, or nullopt if lost.
  std::optional<std::int64_t> submit(std::int64_t sent_ns);

  const SaTotals& totals() const { return totals_; }
  std::int64_t latency_ns() const { return options_.latency_ns; }

 private:
  const std::pair<std::int64_t, std::int64_t>* outage_at_or_after(std::int64_t t) const;

  SaOptions options_;
  TimeSeries& series_;
  std::int64_t service_ns_;
  std::int64_t last_finish_ns_ = 0;
  std::deque<std::int64_t> finish_times_;  // accepted requests not yet finished, in FIFO order
  std::vector<std::pair<std::int64_t, std::int64_t>> outages_;
  SaTotals totals_;
};

}  // namespace ibat::sim
