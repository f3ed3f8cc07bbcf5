// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One MAD request of a simulated daemon, its attempts fabric::MadAttempts' (src/fabric/mad_attempts.h),
// the rule MadRequester runs: each attempt's timer (200, 400, 800, 1,600 ms +/- 25 % with the
// defaults), one TID so that the first answer to any attempt completes the request, a fired timer
// resending or, at the last attempt, failing it. What is the simulator's: each attempt is a new
// arrival at the SA model, and events on its queue. The SA model is FIFO, so the first attempt it
// accepts is the first answered: a request schedules at most one answer event, and a timer event
// only while no answer comes first.
#pragma once

#include <cstdint>
#include <limits>
#include <random>

#include "fabric/mad_attempts.h"
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
    const std::int64_t timer_ns = ns(attempts_.send(core::TimePoint{core::Duration{now_ns}}, policy, rng));
    if (timer_ns < answer_ns_) queue.push(timer_ns, timer_kind, node, id);
  }
  // The running (or last) attempt: 0 = the first send.
  std::uint32_t attempt() const { return attempts_.attempt(); }
  // When the running (or last) attempt was sent.
  std::int64_t sent_ns() const { return ns(attempts_.sent()); }
  // An answer event at `time_ns` is this request's answer (others are late duplicates).
  bool is_answer(std::int64_t time_ns) const { return time_ns == answer_ns_; }
  // A timer event at `time_ns` is the running attempt's timer (not one an answer overtook).
  bool is_timer(std::int64_t time_ns) const { return time_ns == ns(attempts_.deadline()) && time_ns < answer_ns_; }
  // After the running attempt's timer fired: true if the policy allows another attempt (then sent
  // by the caller with send()).
  bool next_attempt(const fabric::RetryPolicy& policy) { return attempts_.timed_out(policy); }

 private:
  static std::int64_t ns(core::TimePoint t) { return t.time_since_epoch().count(); }

  fabric::MadAttempts attempts_;
  std::int64_t answer_ns_ = kNever;  // the first answer of any attempt so far
};

}  // namespace ibat::sim
