// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One MAD request of a simulated daemon as MadRequester (src/fabric/mad_requester.*) runs it: each
// attempt is a new arrival at the SA model, its timer set by fabric::RetryPolicy (200, 400, 800,
// 1,600 ms +/- 25 % with the defaults); every attempt carries the same TID, so the first answer to
// any of them completes the request, and the request fails only when the last attempt's timer
// fires first. The SA model is FIFO, so the first attempt it accepts is the first answered: a
// request schedules at most one answer event, and a timer event only while no answer comes first.
#pragma once

#include <cstdint>
#include <limits>
#include <random>

#include "fabric/retry_policy.h"
#include "sim/event_queue.h"
#include "sim/sa_model.h"

namespace ibat::sim {

class MadAttempts {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // Sends attempt `attempt()` of `query` at `now_ns`: pushes `answer_kind` at its answer time if
  // it is the first answer, and `timer_kind` at its timer if that fires before any answer. A
  // GetTable's answer is one RMPP message: the timer covers its whole transfer, as for a GET.
  void send(const fabric::RetryPolicy& policy, std::mt19937_64& rng, SaModel& sa, EventQueue& queue,
            std::int64_t now_ns, std::uint32_t node, std::uint64_t id, EventKind answer_kind,
            EventKind timer_kind, SaQuery query = SaQuery::get()) {
    if (const auto at = sa.submit(now_ns, query); at && *at < answer_ns_) {
      answer_ns_ = *at;
      queue.push(answer_ns_, answer_kind, node, id);
    }
    sent_ns_ = now_ns;
    const double spread = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    timer_ns_ = now_ns + policy.attempt_timeout(attempt_, spread).count();
    if (timer_ns_ < answer_ns_) {
      queue.push(timer_ns_, timer_kind, node, id);
    } else {
      timer_ns_ = kNever;
    }
  }
  // The running (or last) attempt: 0 = the first send.
  std::uint32_t attempt() const { return attempt_; }
  // When the running (or last) attempt was sent.
  std::int64_t sent_ns() const { return sent_ns_; }
  // An answer event at `time_ns` is this request's answer (others are late duplicates).
  bool is_answer(std::int64_t time_ns) const { return time_ns == answer_ns_; }
  // A timer event at `time_ns` is the running attempt's timer (not one an answer overtook).
  bool is_timer(std::int64_t time_ns) const { return time_ns == timer_ns_; }
  // After the running attempt's timer fired: true if the policy allows another attempt (then sent
  // by the caller with send()).
  bool next_attempt(const fabric::RetryPolicy& policy) {
    timer_ns_ = kNever;
    if (attempt_ >= policy.retries) return false;
    ++attempt_;
    return true;
  }

 private:
  std::int64_t answer_ns_ = kNever;  // the first answer of any attempt so far
  std::int64_t timer_ns_ = kNever;   // the running attempt's timer, if it fires before the answer
  std::int64_t sent_ns_ = 0;
  std::uint32_t attempt_ = 0;        // 0 = first send
};

}  // namespace ibat::sim
