// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmCheckSchedule: full checks on suspicion, routine checks at a slow jittered interval.
#include "fabric/sm_check_schedule.h"

#include <algorithm>

namespace ibat::fabric {

SmCheckSchedule::SmCheckSchedule(core::Duration fast, core::Duration routine, std::uint64_t seed)
    : fast_(fast), routine_(routine), rng_(seed) {}

void SmCheckSchedule::start(core::TimePoint now) {
  suspect_ = true;
  last_check_ = now - fast_;
  schedule_routine(now);
}

void SmCheckSchedule::suspect() {
  suspect_ = true;
  false_alarms_ = 0;
}

void SmCheckSchedule::suspect_timeout() { timeout_suspect_ = true; }

core::Duration SmCheckSchedule::timeout_backoff() const {
  const core::Duration cap = routine_ > core::Duration::zero() ? routine_ : 64 * fast_;
  core::Duration backoff = fast_;
  for (std::uint32_t i = 0; i < false_alarms_ && backoff < cap; ++i) backoff *= 2;
  return std::min(backoff, cap);
}

SmCheck SmCheckSchedule::due(core::TimePoint now) const {
  // Half a poll interval: a check that ended just after its poll began must not push the next
  // poll's check out by a whole interval.
  if (suspect_ && now >= last_check_ + fast_ / 2) return SmCheck::full;
  if (timeout_suspect_ && now >= last_check_ + timeout_backoff() - fast_ / 2) return SmCheck::full;
  if (now >= next_routine_) return SmCheck::routine;
  return SmCheck::none;
}

core::TimePoint SmCheckSchedule::next_due() const {
  core::TimePoint at = next_routine_;
  if (suspect_) at = std::min(at, last_check_ + fast_ / 2);
  if (timeout_suspect_) at = std::min(at, last_check_ + timeout_backoff() - fast_ / 2);
  return at;
}

void SmCheckSchedule::checked(core::TimePoint now, SmCheck kind, bool settled) {
  if (kind == SmCheck::none) return;
  if (!settled) {
    false_alarms_ = 0;
  } else if (kind == SmCheck::full && timeout_suspect_ && !suspect_) {
    ++false_alarms_;  // only timeouts asked for it, and the SM and SA were fine
  } else if (kind == SmCheck::routine) {
    false_alarms_ = 0;
  }
  last_check_ = now;
  suspect_ = !settled;
  timeout_suspect_ = false;
  schedule_routine(now);
}

void SmCheckSchedule::schedule_routine(core::TimePoint now) {
  if (routine_ <= core::Duration::zero()) {
    next_routine_ = core::TimePoint::max();
    return;
  }
  std::uniform_real_distribution<double> stretch(1.0, 1.5);
  next_routine_ = now + std::chrono::duration_cast<core::Duration>(
                            std::chrono::duration<double, std::nano>(static_cast<double>(routine_.count()) *
                                                                      stretch(rng_)));
}

}  // namespace ibat::fabric
