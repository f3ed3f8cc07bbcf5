// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitorLogic: the port monitor's decisions without I/O, time passed in. It takes events (a
// check due at a poll, a check MAD answered or timed out, a remote MAD of the port timed out, an
// answer heard from the SM's LID, a trap subscription confirmed, an SM found or changed) and says
// what to do: which check MAD to send next (SMInfo, the subscription check, or none: the check is
// over), when the next check is due, and when to re-subscribe to the traps and re-read the
// broadcast group. ibatd's PortMonitor drives it over libibumad; ibat-sim's Monitor drives the
// very same object for each simulated host over its SA model and virtual clock (docs/simulator.md).
// Its parts: SmCheckSchedule (when a check is due) and the rules below:
// * a full check asks SMInfo, then, with the SM MASTER and both trap subscriptions confirmed, the
//   subscription check; a routine check asks the subscription check (both confirmed), and SMInfo
//   if that went unsettled; a check is settled when the SM answered MASTER or the SA still held us;
// * a remote MAD that timed out is a sign of a lost SM only if the SM's LID has not answered
//   anything since that attempt went out (else the SA is alive behind a queue);
// * an SM change drops the subscriptions (the new SA holds none) and refreshes them, and the
//   broadcast group, at a random time within the refresh spread; the latest change's refresh wins.
// See docs/fabric.md "Port and SM monitoring".
#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include "core/clock.h"
#include "fabric/retry_policy.h"
#include "fabric/sm_check_schedule.h"

namespace ibat::fabric {

// One port's monitor settings, derived once from the daemon's options.
struct MonitorSettings {
  core::Duration poll{};             // a local PortInfo every poll; checks only at polls
  core::Duration routine{0};         // the routine check's interval; zero: none
  core::Duration refresh_spread{0};  // the refresh after an SM change goes within it; zero: at once
  RetryPolicy check_policy;          // each check MAD (and the local PortInfo)

  // With HCA port events an SM restart is told at once (CLIENT_REREGISTER): no routine check, and
  // the refresh spread, since a restart within it is still told. Without them, the routine check
  // every sm_check_interval, and the refresh at once (a restart within the spread would be seen
  // only through the subscriptions). A poll must finish well inside its interval: each check MAD
  // waits min(mad_timeout, poll / 4), and is sent once more.
  static MonitorSettings of(core::Duration poll, core::Duration sm_check_interval, core::Duration mad_timeout,
                            core::Duration sm_refresh_spread, bool port_events);
};

// A check's next MAD; none: the check is over (or none was due).
enum class CheckMad : std::uint8_t { none, sm_info, subscription };

class PortMonitorLogic {
 public:
  PortMonitorLogic(const MonitorSettings& settings, std::uint64_t seed);

  // The daemon starts: a full check at its first poll; no subscription confirmed.
  void start(core::TimePoint now);
  // A poll at `now`, no check in progress: the first MAD of the check due, or none. Without an SM to ask (`sm_known`
  // false: no SM LID, port not active) a due check ends at once, unsettled.
  CheckMad begin_check(core::TimePoint now, bool sm_known);
  // SMInfo answered (`master`: the SM said MASTER) or unanswered (nullopt): the check's next MAD.
  CheckMad sm_info_answered(core::TimePoint now, std::optional<bool> master);
  // The subscription check answered (`kept`: the SA still holds ours) or unanswered (nullopt).
  CheckMad subscription_answered(core::TimePoint now, std::optional<bool> kept);
  // The check in progress, none between checks.
  SmCheck check() const { return check_; }
  // The earliest time a check is due (TimePoint::max() if none is pending).
  core::TimePoint next_check_due() const { return schedule_.next_due(); }

  // A local change (the port's PortInfo moved, an HCA event): a full check at the next poll.
  void suspect() { schedule_.suspect(); }
  // An answer from the SM's LID (to any MAD of the port, late ones too) arrived at `at`.
  void heard(core::TimePoint at) { last_heard_ = std::max(last_heard_, at); }
  // A remote MAD attempt sent at `sent_at` timed out. True if that asks for a check (a full one,
  // once SmCheckSchedule's back-off allows): the SM's LID has not answered since.
  bool remote_timeout(core::TimePoint sent_at);
  // The SA accepted one of the two trap subscriptions (64, 65).
  void subscription_confirmed() {
    if (subscriptions_ < kSubscriptions) ++subscriptions_;
  }

  // The first SM found: refresh at once (returns when).
  core::TimePoint sm_found(core::TimePoint now);
  // The SM changed: a full check at the next poll, the subscriptions gone; returns when to refresh,
  // drawn from `rng` within the refresh spread.
  core::TimePoint sm_changed(core::TimePoint now, std::mt19937_64& rng);
  // A refresh timer fired at `now`: true if the latest refresh is due (then the caller re-subscribes
  // and re-reads the broadcast group, and the subscriptions count from zero); false for one a later
  // SM change replaced.
  bool take_refresh(core::TimePoint now);

 private:
  static constexpr std::uint8_t kSubscriptions = 2;  // traps 64 and 65: GIDs in and out of service
  CheckMad finish(core::TimePoint now);

  SmCheckSchedule schedule_;
  core::TimePoint last_heard_ = core::TimePoint::min();
  core::TimePoint refresh_at_ = core::TimePoint::max();  // the pending refresh
  core::Duration refresh_spread_;
  SmCheck check_ = SmCheck::none;
  bool master_seen_ = false;  // this check
  bool kept_ = false;         // this check
  std::uint8_t subscriptions_ = 0;
};

}  // namespace ibat::fabric
