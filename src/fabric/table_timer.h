// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableTimer: the MAD timer of one kind of GetTable (PathRecords, NodeRecords, ...) to one SA. A
// GetTable's round trip is long by nature: the SA computes every record of it (and again for every
// resend), so it is no sample of the SA's queue (RoundTripEstimate leaves it out) and a GET's timer
// does not fit it. What it measures is the SA's time per record: (round trip - the queue, as the
// GETs' smoothed round trip shows it) / records, from tables answered at their first attempt
// (Karn), averaged with gain 1/8 as RFC 6298 averages. The next table of the kind is expected to be
// as long as the last one answered, and each of its attempts waits at least twice what that table
// should take: 2 x (queue + records x time per record), as a GET waits 2 x its round trip. Timeouts
// back it off as a single MAD's (TimerBackoff), so a table no timer has yet fitted is answered at a
// first attempt in time and measured. Both at most kMaxTimerFloor. The fixed table_retry_policy stays the least
// (it lets RMPP's own segment resend act first). Pure, so that ibat-sim (sim/round_trips.h) times
// its GetTables with the same rule.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/clock.h"
#include "fabric/retry_policy.h"
#include "fabric/timer_backoff.h"

namespace ibat::fabric {

class TableTimer {
 public:
  // RFC 6298 (2.5)'s least allowed upper bound of a backed-off timer: a table slower than that is
  // answered through its resend (any attempt's answer completes it) and never measured.
  static constexpr core::Duration kMaxTimerFloor = std::chrono::seconds(60);

  // A table of `records` records answered at its first attempt at `now`, `rtt` after it went out,
  // while the SA's GETs took `queue` (their smoothed round trip; zero before any GET was answered).
  void on_sample(core::Duration rtt, std::size_t records, core::Duration queue, core::TimePoint now) {
    expected_records_ = records;
    backoff_.on_sample(now);
    if (records == 0) return;  // nothing computed: the round trip says nothing of a record
    const double sample = static_cast<double>(std::max(rtt - queue, core::Duration::zero()).count()) /
                          static_cast<double>(records);
    per_record_ = have_sample_ ? per_record_ + (sample - per_record_) / 8 : sample;
    have_sample_ = true;
  }
  // An attempt's timer, `timer` long, fired at `now` before its answer.
  void on_timeout(core::Duration timer, core::TimePoint now) { backoff_.on_timeout(timer, now, kMaxTimerFloor); }

  // The least an attempt of the next table should wait while the GETs take `queue`: twice the
  // queue and the last table's records at the measured time each, or the backed-off timer if
  // longer; at most kMaxTimerFloor; zero before any sample or timeout.
  core::Duration timer_floor(core::Duration queue) const {
    core::Duration expected = core::Duration::zero();
    if (have_sample_) {
      const double work = per_record_ * static_cast<double>(expected_records_);
      expected = std::min(queue + core::Duration(static_cast<core::Duration::rep>(work)), kMaxTimerFloor / 2) * 2;
    }
    return std::max(expected, backoff_.floor());
  }
  // `policy` with every attempt's timer at least the floor (RetryPolicy::floor).
  RetryPolicy applied_to(RetryPolicy policy, core::Duration queue) const {
    policy.floor = std::max(policy.floor, timer_floor(queue));
    return policy;
  }

  // The measured SA time per record, in nanoseconds (0 before a sample): for reports and tests.
  double per_record_ns() const { return per_record_; }

 private:
  double per_record_ = 0;              // ns, 1/8-gain average
  std::size_t expected_records_ = 0;   // the last answered table's
  TimerBackoff backoff_;
  bool have_sample_ = false;
};

}  // namespace ibat::fabric
