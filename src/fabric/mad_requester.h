// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequester: the outstanding-request table shared by every MAD client on a port. It allocates
// TIDs, matches responses on the low 32 bits of the TID (umad2sim rewrites the upper 32), validates
// each response (class, response method, attribute, source LID) before handing it over, runs its
// own per-attempt timer (umad2sim ignores umad_send's timeout/retries) and resends with exponential
// backoff and jitter; each request's MadAttempts decides its timers, resend or fail, and the
// kernel's wait. Each remote manager's timers follow its round trip (RoundTripEstimate: at least
// twice its smoothed answer time), so a queue at the SA is waited for, not resent into; each kind
// of GetTable's follow the records the SA computes for it as well (TableTimer); MadTimers composes
// them and takes the samples. ibat-sim runs MadAttempts and MadTimers too. Late, duplicate and
// invalid responses are dropped and counted.
// Runs on the owner's asio loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/clock.h"
#include "fabric/mad_attempts.h"
#include "fabric/mad_io.h"
#include "fabric/mad_requests.h"
#include "fabric/mad_timers.h"
#include "fabric/retry_policy.h"
#include "fabric/round_trip_estimate.h"
#include "fabric/table_timer.h"
#include "mad/mad_header.h"

namespace ibat::fabric {

// MadExpectation, MadAnswer and RequesterCounters: mad_requests.h.

class MadRequester {
 public:
  using Handle = std::uint32_t;  // the low 32 bits of the TID
  // answer == nullptr: every attempt timed out.
  using AnswerHandler = std::function<void(const MadAnswer* answer)>;

  MadRequester(asio::io_context& loop, MadSender& sender, std::uint64_t seed);
  ~MadRequester();
  MadRequester(const MadRequester&) = delete;
  MadRequester& operator=(const MadRequester&) = delete;

  // Writes a fresh TID into `request.bytes`, sends it and arms the attempt timer. Each attempt of a
  // request to another LID waits at least that manager's RoundTripEstimate::timer_floor() then.
  Handle submit(OutgoingMad request, const MadExpectation& expect, const RetryPolicy& policy,
                AnswerHandler on_answer);
  // Forgets the request; its handler is never called. Returns false if it was not outstanding.
  bool cancel(Handle handle);
  // Further attempts of every outstanding request on `route` go to `dlid` (e.g. a new SM LID).
  void retarget(MadRoute route, core::Lid dlid);
  std::size_t outstanding() const { return outstanding_.size(); }

  // Feeds one received MAD. Returns true if it was a response (matched or dropped), false for a
  // request/unsolicited MAD (e.g. a Report) that another component should handle.
  bool on_receive(const ReceivedMad& mad);

  const RequesterCounters& counters() const { return counters_; }
  // The round trip of `mgmt_class` requests to `dlid` (the SA's, the SM's); null before any
  // request to it was answered at its first attempt.
  const RoundTripEstimate* round_trip(std::uint8_t mgmt_class, core::Lid dlid) const {
    return timers_.round_trip(mgmt_class, dlid);
  }
  // The timer of `attr_id` GetTables to `dlid` (the SA's); null before any was answered or timed out.
  const TableTimer* table_timer(std::uint16_t attr_id, core::Lid dlid) const { return timers_.table_timer(attr_id, dlid); }

  // Called on every timed-out attempt to another LID (the SM or SA may have gone): route, DLID,
  // and when the attempt went out. Whether it is a sign of their loss (nothing heard from them
  // since) is the port monitor's to tell (PortMonitorLogic::remote_timeout).
  using RemoteTimeoutObserver = std::function<void(MadRoute, core::Lid dlid, core::TimePoint attempt_sent)>;
  void on_remote_timeout(RemoteTimeoutObserver observer) { remote_timeout_observer_ = std::move(observer); }
  // Called on every response received (late and duplicate ones too): its source LID and when.
  using AnswerObserver = std::function<void(core::Lid slid, core::TimePoint at)>;
  void on_answer(AnswerObserver observer) { answer_observer_ = std::move(observer); }

 private:
  struct Outstanding;
  void send_attempt(Outstanding& entry);
  void on_timer(Handle handle, std::uint32_t attempt);
  static TimedRequest timed(const Outstanding& entry);

  asio::io_context& loop_;
  MadSender& sender_;
  std::mt19937_64 rng_;
  std::uint32_t next_tid_;
  std::unordered_map<Handle, std::unique_ptr<Outstanding>> outstanding_;
  RequesterCounters counters_;
  RemoteTimeoutObserver remote_timeout_observer_;
  AnswerObserver answer_observer_;
  MadTimers timers_;  // each remote manager's round trip and each kind of GetTable's timer
};

}  // namespace ibat::fabric
