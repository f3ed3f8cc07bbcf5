// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The one send rule of a port's SA traffic (see sa_admission.h).
#include "core/sa_admission.h"

#include <algorithm>

namespace ibat::core {

SaAdmission::SaAdmission(const Policy& policy, TimePoint now, std::uint64_t seed, const SaRoundTrip& sa)
    : max_inflight_(policy.sa_max_inflight), adaptive_(policy.sa_adaptive),
      bucket_(policy.sa_rate, policy.sa_burst, now), pacer_(sa, policy.sa_max_inflight, seed) {}

void SaAdmission::configure(const Policy& policy, TimePoint now) {
  max_inflight_ = policy.sa_max_inflight;
  adaptive_ = policy.sa_adaptive;
  bucket_.configure(policy.sa_rate, policy.sa_burst, now);
  pacer_.set_max_window(policy.sa_max_inflight);
}

std::uint32_t SaAdmission::window() const {
  return adaptive_ ? std::min(max_inflight_, pacer_.allowed_inflight()) : max_inflight_;
}

bool SaAdmission::eligible(Traffic kind, const SendLoad& load, TimePoint now) const {
  if (kind != Traffic::late || !load.table_awaited) return true;
  const std::optional<TimePoint> at = earliest(kind, load, now);
  return at && *at <= now;
}

std::optional<TimePoint> SaAdmission::earliest(Traffic kind, const SendLoad& load, TimePoint now) const {
  if (load.inflight >= max_inflight_) return std::nullopt;
  const TimePoint bucket_at = bucket_.next_available(now);
  std::optional<TimePoint> paced;
  if (load.inflight < window()) paced = adaptive_ ? std::max(bucket_at, pacer_.next_send()) : bucket_at;
  if (kind != Traffic::late || !load.table_awaited || !load.late_due) return paced;
  return std::max(bucket_at, *load.late_due);
}

void SaAdmission::on_sent(TimePoint now) {
  bucket_.try_take(now);
  if (adaptive_) pacer_.on_send(now);
}

void SaAdmission::on_result(TimePoint sent, TimePoint now, bool lost) {
  if (!adaptive_) return;
  if (lost) pacer_.on_loss(sent, now);
  else pacer_.on_answer(sent, now);
}

void SaAdmission::on_table_lost(TimePoint sent, TimePoint now) {
  if (adaptive_) pacer_.on_loss(sent, now);
}

void SaAdmission::on_sm_changed(TimePoint now) {
  if (adaptive_) pacer_.restart(now);
}

}  // namespace ibat::core
