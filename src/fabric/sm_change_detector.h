// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmChangeDetector: the pure decision behind PortMonitor. Each poll yields what PortInfo (local
// port) and SMInfo (from the SM) said, or nothing when they went unanswered; the detector says
// whether the local port view changed and whether the SM changed: fail-over (SM LID or GUID
// changed) or a restart on the same node (ActCount went backwards, the SM was unreachable / not
// MASTER and is MASTER again, or the SA no longer knows our trap subscription). ActCount alone is
// not enough: it counts the SM's SMPs, so a quick restart that re-sweeps can overtake the old one.
#pragma once

#include <cstdint>
#include <optional>

#include "core/types.h"

namespace ibat::fabric {

struct PortSample {
  core::Lid lid;
  core::Lid sm_lid;
  std::uint8_t sm_sl = 0;
  bool active = false;
  bool link_down = false;  // PortState DOWN
  bool operator==(const PortSample&) const = default;
};

struct SmSample {
  std::uint64_t guid = 0;
  std::uint32_t act_count = 0;
  bool master = false;
};

struct PollObservation {
  std::optional<PortSample> port;  // nullopt: PortInfo unanswered
  std::optional<SmSample> sm;      // nullopt: SMInfo unanswered (or not asked: no SM LID)
  // Whether the SA still holds our (confirmed) InformInfo subscription; nullopt: not checked.
  std::optional<bool> sa_state_kept;
  // false: SMInfo was not asked this poll (a local-only poll or a routine subscription check);
  // the SM picture is then left as it was, and only a forgotten subscription counts.
  bool sm_asked = true;
};

struct PollVerdict {
  bool local_port_changed = false;
  bool sm_changed = false;
};

class SmChangeDetector {
 public:
  PollVerdict observe(const PollObservation& observation);
  const std::optional<PortSample>& port() const { return port_; }
  // An SM change learnt elsewhere (an HCA event, the SA forgot us): the next MASTER SMInfo is the
  // new baseline, not a second change.
  void forget_sm();

 private:
  std::optional<PortSample> port_;
  std::optional<SmSample> master_;  // last SMInfo seen from a MASTER SM
  bool sm_lost_ = false;            // a MASTER was seen, then the SM stopped answering as MASTER
};

}  // namespace ibat::fabric
