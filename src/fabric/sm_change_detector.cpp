// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmChangeDetector: SM restart / fail-over and local port change rules (see the header).
#include "fabric/sm_change_detector.h"

namespace ibat::fabric {

PollVerdict SmChangeDetector::observe(const PollObservation& observation) {
  PollVerdict verdict;
  if (observation.port) {
    const PortSample& now = *observation.port;
    if (!port_ || !(*port_ == now)) verdict.local_port_changed = true;
    if (port_ && port_->sm_lid.value != 0 && now.sm_lid.value != 0 && port_->sm_lid != now.sm_lid) {
      verdict.sm_changed = true;  // fail-over: every port's SM LID moved to the new master
    }
    port_ = now;
  }
  // The SA state is only asked once the current SA confirmed our subscriptions: "forgotten" means
  // it restarted, whatever else is known.
  if (!observation.sm_asked) {
    if (observation.sa_state_kept == false) {
      verdict.sm_changed = true;
      forget_sm();
    }
    return verdict;
  }
  const bool master_now = observation.sm && observation.sm->master;
  if (!master_now) {
    if (master_) sm_lost_ = true;  // unreachable, or back in DISCOVERING / STANDBY
    return verdict;
  }
  const SmSample& sm = *observation.sm;
  if (master_) {
    if (sm.guid != master_->guid) verdict.sm_changed = true;           // another SM took over
    if (sm.act_count < master_->act_count) verdict.sm_changed = true;  // same SM, restarted
    if (sm_lost_) verdict.sm_changed = true;                            // gone, then back
  }
  if (observation.sa_state_kept == false) verdict.sm_changed = true;  // SA forgot us: restarted
  sm_lost_ = false;
  master_ = sm;
  return verdict;
}

void SmChangeDetector::forget_sm() {
  master_.reset();
  sm_lost_ = false;
}

}  // namespace ibat::fabric
