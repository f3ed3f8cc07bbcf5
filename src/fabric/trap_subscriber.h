// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TrapSubscriber: subscribes (InformInfo SET) to traps 64 and 65 — GID in / out of service — and
// answers every SA Report with a ReportResp echoing its whole TID. OpenSM forgets subscriptions
// when it restarts, so the owner calls subscribe() again after every SM change. Reports reach
// only an "issm" port (docs/design.md §4). Runs on the owner's loop thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "core/types.h"
#include "fabric/mad_requester.h"

namespace ibat::fabric {

class TrapSubscriber {
 public:
  struct Events {
    std::function<void(const core::Gid&)> on_gid_in_service;       // trap 64
    std::function<void(const core::Gid&)> on_gid_out_of_service;   // trap 65
    std::function<void(std::uint16_t trap, bool ok)> on_subscribed;  // one per trap per subscribe()
  };

  TrapSubscriber(MadRequester& requester, MadSender& sender, const RetryPolicy& policy, Events events);

  // Sends InformInfo SET for traps 64 and 65 to the SA at sm_lid.
  void subscribe(core::Lid sm_lid, std::uint8_t sm_sl);
  // GET InformInfoRecord by our subscriber GID: done(true) if the SA holds a subscription of
  // ours, false if it holds none (it restarted), nullopt if it did not say.
  void check_subscribed(core::Lid sm_lid, std::uint8_t sm_sl, const core::Gid& subscriber,
                        std::function<void(std::optional<bool>)> done);
  // Handles an unsolicited MAD; returns true if it was an SA Report. A Report from the current
  // SM LID is answered and, if a trap 64/65 seen for the first time, reported; one from any other
  // LID (a forgery, or an old SM after fail-over) is dropped unanswered and counted.
  bool on_unsolicited(const ReceivedMad& mad, core::Lid sm_lid);

  std::uint64_t reports() const { return reports_; }
  std::uint64_t rejected_reports() const { return rejected_reports_; }

 private:
  bool seen_recently(std::uint64_t tid);

  MadRequester& requester_;
  MadSender& sender_;
  RetryPolicy policy_;
  Events events_;
  std::uint64_t reports_ = 0;
  std::uint64_t rejected_reports_ = 0;
  std::array<std::uint64_t, 64> recent_tids_{};  // OpenSM resends a Report until answered
  std::size_t next_recent_ = 0;
};

}  // namespace ibat::fabric
