// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA congestion control of one Resolver (docs/scale.md, "SA congestion control"): a window of
// queries in flight that the SA's own answers steer, so that thousands of nodes share one SA
// without knowing how many they are. OpenSM never answers BUSY and drops silently only after 10 s
// of queueing, so the signals are the round-trip time (its growth over the smallest seen is the
// SA's queue, as the port's one estimate of the SA tells it: core::SaRoundTrip) and losses (a
// timeout after the fabric's MAD resends, or a BUSY, which the fabric reports as a timeout).
//
// Loss halves the window (once for the queries in flight then). Once per round trip, from the
// smallest queueing delay d of its answers (a standing queue, not one slow answer): d above
// kSaQueueTarget shrinks the window in proportion to the excess; d below kSaQueueTarget / 10 (no
// queue to speak of) grows it by kMaxGrowth; in between, FAST TCP's update w <- w/2 + (w * base / rtt + kQueueShare) / 2 holds kQueueShare of this node's queries in the
// SA's queue, which shares the SA fairly among any number of nodes (all see the same d) and keeps
// the queue at N x kQueueShare queries, to stay inside the target at the subnet sizes ibat serves
// (docs/scale.md), so that the nodes settle in this fair update rather than in the cuts above it. Every send waits
// srtt / window after the last, at most kMaxGap (a window below 1 is a pace: one query per
// 1/window round trips, at least one a second), each gap drawn from [0.5, 1.5] x its length
// (seeded), so nodes do not move in step. The owner's token bucket (Policy::sa_rate / sa_burst)
// and Policy::sa_max_inflight stay the upper bounds. Pure: time comes from the caller.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/sa_queue_target.h"
#include "core/sa_round_trip.h"

namespace ibat::core {

class SaPacer {
 public:
  static constexpr double kInitialWindow = 1.0;
  static constexpr double kMinWindow = 1.0 / 1024;  // one query per 1,024 round trips
  static constexpr double kMaxGrowth = 0.5;          // per round trip, queueing < target / 10
  static constexpr double kQueueShare = 0.1;         // FAST's alpha: queries of ours in the queue
  static constexpr double kFastGain = 0.5;           // FAST's gamma
  static constexpr Duration kMaxGap = std::chrono::seconds(1);  // the slowest pace, before jitter
  static constexpr double kDelayBeta = 0.8;          // decrease per round trip, x excess / delay

  // `sa`: the port's estimate of the SA, sampled by its owner before each on_answer / on_loss;
  // `max_window`: the in-flight cap (Policy::sa_max_inflight).
  SaPacer(const SaRoundTrip& sa, std::uint32_t max_window, std::uint64_t seed);

  void set_max_window(std::uint32_t max_window);
  // Queries that may be in flight now: floor(window), at least 1, at most max_window.
  std::uint32_t allowed_inflight() const;
  // The earliest time the pace lets the next query go (`now` or earlier: at once).
  TimePoint next_send() const { return next_send_; }
  // A query left at `now`: the next one waits srtt / window, jittered (0 before the first sample).
  void on_send(TimePoint now);
  // An answer (any SA status but BUSY) to a query sent at `sent`.
  void on_answer(TimePoint sent, TimePoint now);
  // A query sent at `sent` was lost: timeout after the fabric's resends, or BUSY.
  void on_loss(TimePoint sent, TimePoint now);

  // A new SM: the losses of the old one's absence (or of the new one's first sweep) say nothing of
  // the new SA's queue. A window cut below kInitialWindow starts there again, the next query may go
  // now, and losses of queries sent before do not cut it; the estimate of the SA stays.
  void restart(TimePoint now);

  double window() const { return window_; }

 private:
  void end_round(TimePoint now);
  void start_round(TimePoint now);
  void clamp();

  const SaRoundTrip& sa_;
  double max_window_;
  double window_ = kInitialWindow;
  Prng prng_;
  TimePoint next_send_{};
  // The round in progress: it ends at the first answer after round_end_, or at a loss.
  TimePoint round_end_{};
  double round_delay_s_ = 0;  // the smallest queueing delay of the round's answers
  std::uint32_t delay_samples_ = 0;
  TimePoint last_cut_{};  // the last halving: queries sent before it do not halve again
};

}  // namespace ibat::core
