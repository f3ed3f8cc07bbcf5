// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmCheckSchedule: the pure decision of when PortMonitor asks the SM and SA (remote MADs, a cost
// every host puts on the SM's node) on top of its own port's PortInfo (a local MAD, free for the
// SM). A full check (SMInfo, then the SA's copy of our subscription) runs at once on start and,
// no more than once per poll interval, whenever something may have changed: a local port change,
// a timed-out MAD to the SM or SA, a port event from the HCA. It repeats every poll until the SM
// answers as MASTER again. A timed-out MAD is weaker evidence than a local change: under SA
// overload every host sees timeouts while the SM is fine, and a full check per poll on each of
// them would add to the overload. So when a full check that only timeouts asked for finds nothing
// (a false alarm), the next timeout-driven check waits twice as long (poll × 2^k, up to the
// routine interval); a local change, a check that finds something, or a settled routine check
// starts again at one poll. Otherwise only a routine check runs, at a slow interval with upward
// jitter (routine × [1, 1.5)) so that hosts do not ask in step and no window of one interval sees
// two. See docs/fabric.md "Port and SM monitoring".
#pragma once

#include <cstdint>
#include <random>

#include "core/clock.h"

namespace ibat::fabric {

enum class SmCheck : std::uint8_t {
  none,     // only the local PortInfo this poll
  routine,  // the slow confirmation: one MAD (the subscription check, else SMInfo)
  full,     // SMInfo, then the subscription check
};

class SmCheckSchedule {
 public:
  // fast: the poll interval; routine: the slow interval, zero for never (port events are live).
  SmCheckSchedule(core::Duration fast, core::Duration routine, std::uint64_t seed);

  void start(core::TimePoint now);    // the first poll runs a full check
  void suspect();                     // a local change: a full check at the next poll it is due
  void suspect_timeout();             // a remote MAD timed out: a full check once the back-off allows
  SmCheck due(core::TimePoint now) const;
  // The earliest time due() is not `none` (TimePoint::max() if nothing is pending).
  core::TimePoint next_due() const;
  // A check of `kind` ran at `now`; settled: the SM/SA answered and nothing is left to confirm.
  void checked(core::TimePoint now, SmCheck kind, bool settled);

 private:
  void schedule_routine(core::TimePoint now);
  core::Duration timeout_backoff() const;

  core::Duration fast_;
  core::Duration routine_;
  std::mt19937_64 rng_;
  bool suspect_ = false;          // a local change or an unsettled check: next poll
  bool timeout_suspect_ = false;  // only timeouts: after timeout_backoff()
  std::uint32_t false_alarms_ = 0;
  core::TimePoint last_check_{};
  core::TimePoint next_routine_ = core::TimePoint::max();
};

}  // namespace ibat::fabric
