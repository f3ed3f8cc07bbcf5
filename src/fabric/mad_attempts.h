// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadAttempts: the attempts of one MAD request, the resend rule without I/O, time passed in. Every
// attempt carries the request's one TID, so an answer to any of them completes the request: its
// round trip counts from the running attempt's send and names that attempt (which send it answers
// cannot be told; MadTimers keeps only first attempts' samples). Attempt k's timer is the policy's
// attempt_timeout(k) with a jitter drawn uniformly in [-1, 1] from the caller's rng; when it fires,
// the request is sent again if the policy allows another attempt and fails if it was the last. The
// kernel keeps matching answers to an attempt until the last attempt can end (kernel_wait_ms), so a
// late answer to an earlier attempt still arrives while a resend waits.
// Pure: MadRequester (ibatd) keeps one per outstanding request beside its asio timer and TID;
// ibat-sim (sim/mad_attempts.h) one per simulated request beside its events.
#pragma once

#include <cstdint>
#include <random>

#include "core/clock.h"
#include "fabric/retry_policy.h"

namespace ibat::fabric {

// An answer to a request: the attempt running when it came (0 = the first send) and how long after
// that attempt went out.
struct AttemptAnswer {
  std::uint32_t attempt = 0;
  core::Duration round_trip{0};
};

class MadAttempts {
 public:
  // deadline() while no timer runs: before the first send, after an answer or a fired timer.
  static constexpr core::TimePoint kNoTimer = core::TimePoint::max();

  // Attempt attempt() goes out at `now` with `policy` (as it stands for this attempt); returns when
  // its timer fires.
  core::TimePoint send(core::TimePoint now, const RetryPolicy& policy, std::mt19937_64& rng);
  // The running attempt's timer fired: true if `policy` allows another attempt (attempt() is then
  // that one, to send()), false if it was the last: the request failed.
  bool timed_out(const RetryPolicy& policy);
  // An answer to any attempt came at `now`: the request is complete.
  AttemptAnswer answered(core::TimePoint now);
  // How long the kernel should match answers to the running attempt: until the last attempt can
  // end (each remaining one at its longest jitter), in whole milliseconds, at least 1.
  std::uint32_t kernel_wait_ms(const RetryPolicy& policy) const;

  // The running (or last) attempt: 0 = the first send.
  std::uint32_t attempt() const { return attempt_; }
  // When it went out.
  core::TimePoint sent() const { return sent_; }
  // When its timer fires; kNoTimer if none runs.
  core::TimePoint deadline() const { return deadline_; }

 private:
  core::TimePoint sent_{};
  core::TimePoint deadline_ = kNoTimer;
  std::uint32_t attempt_ = 0;
};

}  // namespace ibat::fabric
