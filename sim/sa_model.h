// The Subnet Administrator as OpenSM runs it (docs/scale.md, "The SA model"): one FIFO server with
// a fixed service time per PathRecord (1/rate) and an unbounded queue; an arriving GET is dropped
// silently (never BUSY) while more than one request waits and the last request taken off the
// queue had waited longer than max_msg_fifo_timeout (10 s); a one-way fabric latency; outage
// windows (SM restart, not yet MASTER) during which requests are lost. An optional queue limit
// models a bounded SA instead. Answers are never late on purpose: the caller compares the answer
// time with its MAD timeout.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/time_series.h"

namespace ibat::sim {

struct SaOptions {
  double rate_per_s = 50'000.0;      // PathRecords served per second (OpenSM's published figure)
  std::uint32_t queue_limit = 0;     // requests in the SA (queued + in service); 0: unbounded
  std::int64_t fifo_timeout_ns = 10'000'000'000;  // OpenSM max_msg_fifo_timeout; 0: never drop
  std::int64_t latency_ns = 5'000;   // one-way fabric latency
};

struct SaTotals {
  std::uint64_t arrived = 0;  // queries that reached the SA (every MAD attempt)
  std::uint64_t served = 0;   // answered (possibly after the requester gave up)
  std::uint64_t dropped = 0;  // overloaded, queue full or SA unavailable
  std::uint64_t overload_dropped = 0;  // of those: head-of-line wait beyond fifo_timeout, or full
  std::int64_t max_wait_ns = 0;  // longest time a request waited in the queue before service
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
  struct Accepted {
    std::int64_t start_ns;   // taken off the queue
    std::int64_t finish_ns;
    std::int64_t wait_ns;    // start - arrival
  };
  std::deque<Accepted> waiting_;  // accepted requests not yet taken off the queue, in FIFO order
  Accepted last_started_{0, 0, 0};
  std::vector<std::pair<std::int64_t, std::int64_t>> outages_;
  SaTotals totals_;
};

}  // namespace ibat::sim
