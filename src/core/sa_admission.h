// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One port's admission of SA queries (docs/design.md, "Admission"): the one rule that says which
// kind of traffic may send its next GET now, and when the next may go. The Resolver's send loop
// (Resolver::Impl::settle) and its wake-up time (next_wakeup) both ask it, so they cannot disagree.
//
// Traffic kinds, highest priority first:
//   waited      a request waits on the answer;
//   late        a request's GET after its wait for the awaited GetTable (Resolver::park_for_table);
//   background  a revalidation or a prefetch nobody waits on yet.
// The gates every GET passes: queries in flight below the cap (the SaPacer's window, at most
// Policy::sa_max_inflight), the SaPacer's pace, and the token bucket (Policy::sa_rate/sa_burst).
// While a GetTable is awaited a late GET goes when the Resolver says it is due (SendLoad::late_due:
// its requests' deadlines, just in time), held only by sa_max_inflight and the bucket: the table
// will bring its path, so it goes no sooner than its deadline needs, and the other hosts' tables
// keep the SA's queue long, which the pacer would read as congestion and hold it past them.
// Pure: time comes from the caller.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/clock.h"
#include "core/policy.h"
#include "core/sa_pacer.h"
#include "core/token_bucket.h"

namespace ibat::core {

enum class Traffic : std::uint8_t { waited, late, background };
inline constexpr std::array<Traffic, 3> kTrafficByPriority{Traffic::waited, Traffic::late, Traffic::background};

// What the admission needs to know of the port's state at the moment it is asked.
struct SendLoad {
  std::size_t inflight = 0;    // GETs of this port in flight
  bool table_awaited = false;  // a GetTable is wanted or in flight
  // While it is: when the next late GET is due; nullopt: none queued.
  std::optional<TimePoint> late_due = std::nullopt;
};

class SaAdmission {
 public:
  // `sa`: the port's estimate of the SA, which its pacer reads.
  SaAdmission(const Policy& policy, TimePoint now, std::uint64_t seed, const SaRoundTrip& sa);
  void configure(const Policy& policy, TimePoint now);  // SIGHUP: the bucket keeps its tokens

  // Whether a queued GET of `kind` is picked ahead of the kinds below it now: a late GET is not
  // until it may go, so that a background one may go meanwhile.
  bool eligible(Traffic kind, const SendLoad& load, TimePoint now) const;
  // The earliest time the next GET of `kind` may go (at or before `now`: at once); nullopt: not
  // before a query in flight ends.
  std::optional<TimePoint> earliest(Traffic kind, const SendLoad& load, TimePoint now) const;
  // A GET goes now; call only when earliest() for its kind is at or before `now`.
  void on_sent(TimePoint now);
  // The GET sent at `sent` was answered, or `lost` (a timeout after the fabric's
  // resends, or BUSY).
  void on_result(TimePoint sent, TimePoint now, bool lost);
  // A GetTable sent at `sent` was lost: the SA's overload signal as much as a lost GET (its round
  // trip, long by nature, is no sample of the SA's queue).
  void on_table_lost(TimePoint sent, TimePoint now);
  void on_sm_changed(TimePoint now);  // the pacer restarts (SaPacer::restart)

  std::uint32_t window() const;  // GETs that may be in flight now (Stats::sa_window)

 private:
  std::uint32_t max_inflight_;
  bool adaptive_;
  TokenBucket bucket_;
  SaPacer pacer_;
};

}  // namespace ibat::core
