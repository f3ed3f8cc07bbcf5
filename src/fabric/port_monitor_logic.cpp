// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitorLogic: the check sequence, the SM-alive rule and the refresh after an SM change.
#include "fabric/port_monitor_logic.h"

#include <algorithm>

namespace ibat::fabric {

MonitorSettings MonitorSettings::of(core::Duration poll, core::Duration sm_check_interval, core::Duration mad_timeout,
                                    core::Duration sm_refresh_spread, bool port_events) {
  MonitorSettings s;
  s.poll = poll;
  s.routine = port_events ? core::Duration::zero() : sm_check_interval;
  s.refresh_spread = port_events ? sm_refresh_spread : core::Duration::zero();
  s.check_policy = RetryPolicy{.timeout = std::min(mad_timeout, poll / 4), .retries = 1};
  return s;
}

PortMonitorLogic::PortMonitorLogic(const MonitorSettings& settings, std::uint64_t seed)
    : schedule_(settings.poll, settings.routine, seed), refresh_spread_(settings.refresh_spread) {}

void PortMonitorLogic::start(core::TimePoint now) {
  subscriptions_ = 0;
  schedule_.start(now);
}

CheckMad PortMonitorLogic::begin_check(core::TimePoint now, bool sm_known) {
  check_ = schedule_.due(now);
  master_seen_ = false;
  kept_ = false;
  if (check_ == SmCheck::none) return CheckMad::none;
  if (!sm_known) return finish(now);
  if (check_ == SmCheck::routine && subscriptions_ == kSubscriptions) return CheckMad::subscription;
  return CheckMad::sm_info;
}

CheckMad PortMonitorLogic::sm_info_answered(core::TimePoint now, std::optional<bool> master) {
  master_seen_ = master == true;
  if (check_ == SmCheck::full && master_seen_ && subscriptions_ == kSubscriptions) return CheckMad::subscription;
  return finish(now);
}

CheckMad PortMonitorLogic::subscription_answered(core::TimePoint now, std::optional<bool> kept) {
  kept_ = kept == true;
  if (check_ == SmCheck::routine && !kept_) return CheckMad::sm_info;  // the SA did not settle it: ask the SM
  return finish(now);
}

CheckMad PortMonitorLogic::finish(core::TimePoint now) {
  schedule_.checked(now, check_, master_seen_ || kept_);
  check_ = SmCheck::none;
  return CheckMad::none;
}

bool PortMonitorLogic::remote_timeout(core::TimePoint sent_at) {
  if (last_heard_ >= sent_at) return false;  // a queue, not a lost SM
  schedule_.suspect_timeout();
  return true;
}

core::TimePoint PortMonitorLogic::sm_found(core::TimePoint now) {
  refresh_at_ = now;
  return now;
}

core::TimePoint PortMonitorLogic::sm_changed(core::TimePoint now, std::mt19937_64& rng) {
  subscriptions_ = 0;
  schedule_.suspect();  // a full check next: the new SM's baseline
  core::Duration delay{0};
  if (refresh_spread_ > core::Duration::zero()) {
    delay = core::Duration{std::uniform_int_distribution<core::Duration::rep>(0, refresh_spread_.count() - 1)(rng)};
  }
  refresh_at_ = now + delay;
  return refresh_at_;
}

bool PortMonitorLogic::take_refresh(core::TimePoint now) {
  if (refresh_at_ > now) return false;
  refresh_at_ = core::TimePoint::max();
  subscriptions_ = 0;
  return true;
}

}  // namespace ibat::fabric
