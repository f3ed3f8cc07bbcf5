// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// When a port's GetTable goes (see table_gate.h).
#include "core/table_gate.h"

#include <algorithm>

namespace ibat::core {

void TableGate::want(TimePoint now, std::size_t subnet_ports, TimePoint not_before) {
  wanted_ = true;
  open_ = false;
  probing_ = false;
  gap_ = Duration::zero();
  const Duration window = kProbeSlot * static_cast<Duration::rep>(subnet_ports);
  window_ = window;
  next_probe_ = std::max(not_before, now) + prng_.uniform(Duration::zero(), window);
}

void TableGate::clear() {
  wanted_ = false;
  open_ = false;
  probing_ = false;
}

std::optional<TimePoint> TableGate::probe_due() const {
  if (!wanted_ || open_ || probing_) return std::nullopt;
  return next_probe_;
}

void TableGate::on_probe_sent(TimePoint now) {
  probing_ = true;
  probe_sent_ = now;
}

bool TableGate::on_probe_result(TimePoint now, bool lost, Duration queue) {
  if (!probing_) return open_;
  probing_ = false;
  const Duration waited = std::max(queue, Duration::zero());
  if (!lost && waited < kSaQueueTarget) {
    open_ = true;
    return true;
  }
  // The queue drains in no less than the probe waited in it; each probe that finds it long again
  // doubles the wait, as the subnet's other hosts are finding it long too, but never past
  // kQueueDrains x what this probe waited: by then the SA has drained that queue several times.
  gap_ = std::min(std::max(waited * kQueueDrains, window_), std::max(waited, gap_ * 2));
  next_probe_ = now + prng_.uniform(gap_ / 2, gap_ + gap_ / 2);
  return false;
}

}  // namespace ibat::core
