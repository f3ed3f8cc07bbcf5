// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequests: a port's outstanding MAD requests without I/O, time passed in. It allocates TIDs
// (the low 32 bits: the kernel and umad2sim own the upper 32; sequential from a start drawn from
// its seeded rng, skipping 0 and outstanding ones), keeps each request with its MadAttempts,
// matches a received response to its request on those bits and validates it (class, response
// method, attribute, source LID) before it completes the request, counts what it sees, and feeds
// MadTimers (each remote manager's round trip, each kind of GetTable's timer) with Karn's rule.
// Each event goes in with its time (submit, a timer fired, a MAD received) and what to do comes
// back: the attempt to send and when its timer fires, a resend, a failure, an answer, or nothing;
// the caller sends, arms timers and calls handlers. The jitter of every attempt's timer is drawn
// from its rng, in the order of the sends. MadRequester drives it over libibumad's transport and
// asio's timers (mad_requester.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>

#include "core/clock.h"
#include "core/types.h"
#include "fabric/mad_attempts.h"
#include "fabric/mad_io.h"
#include "fabric/mad_timers.h"
#include "fabric/retry_policy.h"
#include "fabric/round_trip_estimate.h"
#include "fabric/table_timer.h"
#include "mad/mad_header.h"

namespace ibat::fabric {

// What a valid response to a request must look like.
struct MadExpectation {
  std::uint8_t mgmt_class = 0;
  std::uint8_t method = 0;       // e.g. GetResp
  std::uint16_t attr_id = 0;
  bool check_source_lid = true;  // the response must come from the LID the request went to
};

// A validated response: its decoded header and the whole received MAD (or RMPP message).
struct MadAnswer {
  mad::MadHeader header;
  std::span<const std::uint8_t> bytes;  // zero-filled to at least 256 bytes
  std::size_t length = 0;               // the message's length (ReceivedMad::length)
};

struct RequesterCounters {
  std::uint64_t sent = 0;               // attempts handed to the transport (retries included)
  std::uint64_t local_sent = 0;         // of which 0-hop directed-route SMPs to the own port
  std::uint64_t remote_sent = 0;        // of which to another LID (the SM, the SA)
  std::uint64_t send_failures = 0;      // attempts the transport refused
  std::uint64_t received = 0;           // every MAD seen by on_receive
  std::uint64_t timeouts = 0;           // attempts whose timer fired
  std::uint64_t retries = 0;            // resends
  std::uint64_t late_or_duplicate = 0;  // responses with no outstanding request
  std::uint64_t invalid_responses = 0;  // matched a TID but failed validation, or no header
};

class MadRequests {
 public:
  using Handle = std::uint32_t;  // the low 32 bits of the TID

  // An attempt to put on the wire: `mad` is the request with its TID written and timeout_ms set to
  // the kernel's wait (the request's own, valid while it is outstanding); its timer fires at
  // `fires`, and on_timer then names (handle, attempt).
  struct Attempt {
    Handle handle = 0;
    std::uint32_t attempt = 0;  // 0 = the first send
    const OutgoingMad* mad = nullptr;
    core::TimePoint fires{};
  };

  // What a fired timer decides.
  struct Timeout {
    enum class Kind : std::uint8_t {
      stale,   // not the running attempt's (answered, cancelled, failed or resent since): nothing
      resend,  // send `resend`
      failed,  // that was the last attempt: the request is gone, unanswered
    };
    Kind kind = Kind::stale;
    Attempt resend{};  // kind == resend
    // The attempt that timed out (kind != stale): its route, DLID (as retarget left it) and send.
    MadRoute route = MadRoute::sa;
    core::Lid dlid{};
    core::TimePoint attempt_sent{};
    // To another LID (the SM or SA may have gone: PortMonitorLogic::remote_timeout tells).
    bool remote() const { return kind != Kind::stale && route != MadRoute::smi_directed; }
  };

  // What a received MAD is.
  struct Received {
    enum class Kind : std::uint8_t {
      not_a_response,     // a request or an unsolicited MAD (e.g. a Report): another component's
      undecodable,        // no MAD header: dropped, counted invalid
      send_status,        // a non-zero transport status (a send unanswered): dropped, the timer covers it
      late_or_duplicate,  // a response with no outstanding request: dropped, counted
      invalid,            // a response that failed validation: dropped, counted; its request waits on
      answered,           // `answer` completes request `handle`, which is gone
    };
    Kind kind = Kind::not_a_response;
    Handle handle = 0;  // kind == answered or invalid
    MadAnswer answer{};  // kind == answered: spans the ReceivedMad's bytes
    // A response was heard from its source LID (a late, duplicate or invalid one too).
    bool heard() const { return kind >= Kind::late_or_duplicate; }
  };

  // TIDs start after a draw from the rng seeded with `seed`; the jitter draws follow it.
  explicit MadRequests(std::uint64_t seed);

  // Takes a request: writes a fresh TID into its bytes and returns its first attempt, sent `now`.
  // An attempt to another LID waits by the policy as MadTimers raises it for that attempt.
  Attempt submit(OutgoingMad request, const MadExpectation& expect, const RetryPolicy& policy, core::TimePoint now);
  // The transport refused the attempt just returned (it is counted; its timer treats it as lost).
  void send_failed() { ++counters_.send_failures; }
  // The timer of attempt `attempt` of `handle` fired at `now`.
  Timeout on_timer(Handle handle, std::uint32_t attempt, core::TimePoint now);
  // A MAD arrived at `now`.
  Received on_receive(const ReceivedMad& mad, core::TimePoint now);
  // Forgets the request (an answer to it is then late). Returns false if it was not outstanding.
  bool cancel(Handle handle) { return outstanding_.erase(handle) > 0; }
  // Further attempts of every outstanding request on `route` go to `dlid` (e.g. a new SM LID).
  void retarget(MadRoute route, core::Lid dlid);
  // The next TID follows `tid` (it wraps at 2^32, skipping 0 and outstanding TIDs: for tests, as a
  // port's lifetime does not reach it).
  void continue_tids_after(Handle tid) { next_tid_ = tid; }

  std::size_t outstanding() const { return outstanding_.size(); }
  const RequesterCounters& counters() const { return counters_; }
  // The round trip of `mgmt_class` requests to `dlid` (the SA's, the SM's); null before any
  // request to it was answered at its first attempt or timed out.
  const RoundTripEstimate* round_trip(std::uint8_t mgmt_class, core::Lid dlid) const {
    return timers_.round_trip(mgmt_class, dlid);
  }
  // The timer of `attr_id` GetTables to `dlid` (the SA's); null before any was answered or timed out.
  const TableTimer* table_timer(std::uint16_t attr_id, core::Lid dlid) const { return timers_.table_timer(attr_id, dlid); }

 private:
  struct Outstanding {
    OutgoingMad request;
    MadExpectation expect;
    RetryPolicy policy;
    MadAttempts attempts{};  // which attempt runs, when it went, its timer
  };
  Attempt send_attempt(Handle handle, Outstanding& entry, core::TimePoint now);
  static TimedRequest timed(const Outstanding& entry);

  std::mt19937_64 rng_;
  std::uint32_t next_tid_;
  std::unordered_map<Handle, Outstanding> outstanding_;
  RequesterCounters counters_;
  MadTimers timers_;  // each remote manager's round trip and each kind of GetTable's timer
};

}  // namespace ibat::fabric
