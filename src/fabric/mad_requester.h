// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequester: a port's MAD requests over its transport and asio loop, shared by every MAD client
// on the port (SaClient, PortMonitor, TrapSubscriber). MadRequests (mad_requests.h) decides
// everything without I/O: the TIDs, matching and validating responses, each request's attempts
// (resend with backoff and jitter, or fail), the timers that follow each remote manager's round
// trip and each kind of GetTable's records, the counters. MadRequester does what it says: sends
// each attempt through the MadSender, runs one asio timer per request (umad2sim ignores
// umad_send's timeout/retries), reads the clock once per event and passes it in, and calls the
// request's handler and the observers.
// Runs on the owner's asio loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/clock.h"
#include "fabric/mad_io.h"
#include "fabric/mad_requests.h"
#include "fabric/round_trip_estimate.h"
#include "fabric/table_timer.h"

namespace ibat::fabric {

// MadExpectation, MadAnswer and RequesterCounters: mad_requests.h.

class MadRequester {
 public:
  using Handle = MadRequests::Handle;  // the low 32 bits of the TID
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
  std::size_t outstanding() const { return requests_.outstanding(); }

  // Feeds one received MAD. Returns true if it was a response (matched or dropped), false for a
  // request/unsolicited MAD (e.g. a Report) that another component should handle.
  bool on_receive(const ReceivedMad& mad);

  const RequesterCounters& counters() const { return requests_.counters(); }
  // The round trip of `mgmt_class` requests to `dlid` (the SA's, the SM's); null before any
  // request to it was answered at its first attempt or timed out.
  const RoundTripEstimate* round_trip(std::uint8_t mgmt_class, core::Lid dlid) const {
    return requests_.round_trip(mgmt_class, dlid);
  }
  // The timer of `attr_id` GetTables to `dlid` (the SA's); null before any was answered or timed out.
  const TableTimer* table_timer(std::uint16_t attr_id, core::Lid dlid) const { return requests_.table_timer(attr_id, dlid); }

  // Called on every timed-out attempt to another LID (the SM or SA may have gone): route, DLID,
  // and when the attempt went out. Whether it is a sign of their loss (nothing heard from them
  // since) is the port monitor's to tell (PortMonitorLogic::remote_timeout).
  using RemoteTimeoutObserver = std::function<void(MadRoute, core::Lid dlid, core::TimePoint attempt_sent)>;
  void on_remote_timeout(RemoteTimeoutObserver observer) { remote_timeout_observer_ = std::move(observer); }
  // Called on every response received (late and duplicate ones too): its source LID and when.
  using AnswerObserver = std::function<void(core::Lid slid, core::TimePoint at)>;
  void on_answer(AnswerObserver observer) { answer_observer_ = std::move(observer); }

 private:
  // What a request needs beyond MadRequests: its attempt timer and its handler.
  struct Pending {
    explicit Pending(asio::io_context& loop) : timer(loop) {}
    asio::steady_timer timer;
    AnswerHandler on_answer;
  };
  void send(Pending& pending, const MadRequests::Attempt& attempt);
  void on_timer(Handle handle, std::uint32_t attempt);
  // Ends request `handle` (answered or failed): its timer goes, then its handler is called.
  void complete(Handle handle, const MadAnswer* answer);

  asio::io_context& loop_;
  MadSender& sender_;
  MadRequests requests_;
  std::unordered_map<Handle, Pending> pending_;  // one per outstanding request of requests_
  RemoteTimeoutObserver remote_timeout_observer_;
  AnswerObserver answer_observer_;
};

}  // namespace ibat::fabric
