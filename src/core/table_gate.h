// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// When a port's GetTable goes (docs/design.md, "Admission"): closed loop on the SA's queue as a
// probe shows it, never on an assumed SA speed. Every host of a subnet wants its
// table at the same moment (power-on, SM change), n tables of n paths: sent at once they queue
// past OpenSM's 10 s FIFO timeout. So while a table is wanted the port probes the SA with one
// GET (the path to itself) and sends the table only when that probe waited less than kSaQueueTarget in
// the SA's queue, all of its round trip counted as queue (the SaScheduler's rule); otherwise it
// probes again after a wait at least as long as the queue it saw,
// doubled after each probe that found it too long, never more than kQueueDrains x the queue it
// last saw (so that the last tables follow a fast SA's drain), each drawn from [0.5, 1.5] x its
// length (seeded), so the hosts do not move in step. A faster SA or more SA
// threads drain the queue sooner and the tables follow; a slower one holds them back.
// The first probes of a subnet of n end ports are spread over n x kProbeSlot: probes cost the SA
// a GET each, and a subnet's hosts all probing in one instant would all find the queue empty.
// Pure: time comes from the caller.
#pragma once

#include <cstddef>
#include <optional>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/sa_queue_target.h"

namespace ibat::core {

class TableGate {
 public:
  // A table goes when its probe waited less than kSaQueueTarget in the SA's queue, the SaPacer's
  // target (its GETs see the same queue; a table that waits for less does not push them above
  // theirs).
  // The subnet's first probes, one per end port, this far apart on average: 1,000 GETs a second,
  // a small share of what an SA answers, so that probing costs the SA little at any subnet size.
  static constexpr Duration kProbeSlot = std::chrono::milliseconds(1);
  // A probe's wait is at most this many times the queue it saw: by then the SA has drained that
  // queue several times, so the last tables follow a fast SA (docs/scale.md measures the choice).
  static constexpr int kQueueDrains = 4;

  explicit TableGate(std::uint64_t seed) : prng_(seed) {}

  // A new table is wanted at `now` in a subnet of `subnet_ports` end ports (0: unknown): its first
  // probe goes at a random time within the subnet's first probe window, not before `not_before`.
  void want(TimePoint now, std::size_t subnet_ports, TimePoint not_before);
  void clear();  // no table wanted (sent, dropped)

  // When the next probe is due: nullopt while one is in flight, while none is wanted, or once a
  // probe has opened the gate.
  std::optional<TimePoint> probe_due() const;
  void on_probe_sent(TimePoint now);
  TimePoint probe_sent_at() const { return probe_sent_; }
  // The probe sent last was answered at `now` after waiting `queue` in the SA's queue, or `lost`
  // (timed out after the fabric's resends; `queue`: its lifetime): whether the table may go now.
  bool on_probe_result(TimePoint now, bool lost, Duration queue);
  bool open() const { return open_; }
  bool wanted() const { return wanted_; }
  // A probe found the queue too long: the table is not coming soon.
  bool held() const { return wanted_ && !open_ && gap_ > Duration::zero(); }

 private:
  Prng prng_;
  bool wanted_ = false;
  bool open_ = false;
  bool probing_ = false;
  TimePoint next_probe_{};
  TimePoint probe_sent_{};
  Duration gap_{0};     // the wait after the last probe that found the queue too long, before jitter
  Duration window_{0};  // the subnet's first-probe window: also the least a held probe's wait may grow to
};

}  // namespace ibat::core
