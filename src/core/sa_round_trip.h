// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaRoundTrip: a port's one estimate of its SA (docs/design.md, "Admission"), which every part of
// the port's admission reads: how long the SA takes to answer (the smoothed round trip, RFC 6298's
// 1/8 gain), the least it has taken (the SA with an empty queue: its base), and so how long an
// answer waited in the SA's queue (its round trip less the base). The SaPacer paces by the smoothed
// round trip and steers by the answers' queue. Its samples are the round trips of the port's
// answered GETs, which the SaScheduler feeds (a table probe's is the gate's alone); before any answer, the lifetime of a query lost
// stands in for the round trip, so that a pace can start from it. Pure: durations come from the caller.
#pragma once

#include "core/clock.h"

namespace ibat::core {

class SaRoundTrip {
 public:
  // A query answered `rtt` after it went out.
  void on_answer(Duration rtt);
  // A query lost `lifetime` after it went out: before any answer, the round trip is at least that.
  void on_lost(Duration lifetime);

  Duration srtt() const { return srtt_; }  // 0 before any answer or loss
  Duration base() const { return base_; }  // the smallest round trip answered; 0 before any
  // How long an answer `rtt` after its send waited in the SA's queue, as the base tells it.
  Duration queue(Duration rtt) const { return rtt - base_; }

 private:
  Duration srtt_{0};
  Duration base_{0};
  bool answered_ = false;
};

}  // namespace ibat::core
