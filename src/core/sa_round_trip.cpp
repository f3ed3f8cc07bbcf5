// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A port's one estimate of its SA (see sa_round_trip.h).
#include "core/sa_round_trip.h"

#include <algorithm>

namespace ibat::core {

void SaRoundTrip::on_answer(Duration rtt) {
  rtt = std::max(Duration::zero(), rtt);
  if (!answered_) {
    answered_ = true;
    srtt_ = rtt;
    base_ = rtt;
  } else {
    srtt_ += (rtt - srtt_) / 8;
    base_ = std::min(base_, rtt);
  }
}

void SaRoundTrip::on_lost(Duration lifetime) {
  if (!answered_) srtt_ = std::max(srtt_, lifetime);
}

}  // namespace ibat::core
