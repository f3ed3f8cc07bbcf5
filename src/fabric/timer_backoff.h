// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TimerBackoff: RFC 6298 (5.5)'s backed-off timer, kept until the next sample. Behind a queue
// longer than the timer no first attempt is answered in time, so nothing measures the round trip:
// a timed-out attempt has every later attempt wait at least twice the timer that fired (at most a
// ceiling), until an answer to a first attempt measures it again. An attempt that went out before
// the last sample backs nothing off: that answer says the peer answers in time now, so the loss was
// the fabric's (NewReno's rule for losses of data sent before the last recovery; without it a timer
// armed long in a lossy spell puts the floor back at the ceiling when it fires:
// docs/reliability.md, "10 % loss right after 50 %"). The one back-off of RoundTripEstimate (a
// manager's single MADs) and TableTimer (a kind of GetTable). Pure: time passed in.
#pragma once

#include <algorithm>

#include "core/clock.h"

namespace ibat::fabric {

class TimerBackoff {
 public:
  // An attempt answered at its first send, at `now`: the round trip is measured again.
  void on_sample(core::TimePoint now) {
    backoff_ = core::Duration::zero();
    last_sample_ = now;
  }
  // An attempt's timer, `timer` long, fired at `now` before its answer; the floor at most `ceiling`.
  void on_timeout(core::Duration timer, core::TimePoint now, core::Duration ceiling) {
    if (now - timer < last_sample_) return;  // sent before the last sample: the fabric lost it
    backoff_ = std::min(std::max(backoff_, timer * 2), ceiling);
  }
  // The least a next attempt should wait: twice the longest timer fired since the last sample.
  core::Duration floor() const { return backoff_; }

 private:
  core::Duration backoff_{0};
  core::TimePoint last_sample_ = core::TimePoint::min();  // when the last sample's answer came
};

}  // namespace ibat::fabric
