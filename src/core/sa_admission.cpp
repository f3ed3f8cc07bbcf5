// The one send rule of a port's SA traffic (see sa_admission.h).
#include "core/sa_admission.h"

#include <algorithm>

namespace ibat::core {

SaAdmission::SaAdmission(const Policy& policy, TimePoint now, std::uint64_t seed)
    : max_inflight_(policy.sa_max_inflight), adaptive_(policy.sa_adaptive),
      bucket_(policy.sa_rate, policy.sa_burst, now), pacer_(policy.sa_max_inflight, seed) {}

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
  return kind != Traffic::late || !load.table_awaited || now >= next_late_send_;
}

std::optional<TimePoint> SaAdmission::earliest(Traffic kind, const SendLoad& load, TimePoint now) const {
  const bool alone = late_alone(kind, load);
  if (load.inflight >= (alone ? max_inflight_ : window())) return std::nullopt;
  TimePoint at = bucket_.next_available(now);
  if (!alone && adaptive_) at = std::max(at, pacer_.next_send());
  if (kind == Traffic::late && load.table_awaited) at = std::max(at, next_late_send_);
  return at;
}

void SaAdmission::on_sent(Traffic kind, const SendLoad& load, TimePoint now) {
  bucket_.try_take(now);
  if (kind == Traffic::late) next_late_send_ = now + load.late_gap;
  if (adaptive_) pacer_.on_send(now);
}

void SaAdmission::on_result(Traffic kind, TimePoint sent, TimePoint now, bool lost) {
  if (adaptive_) {
    if (lost) pacer_.on_loss(sent, now);
    else pacer_.on_answer(sent, now);
  }
  if (kind == Traffic::late) late_lost_ = lost;
}

void SaAdmission::on_table_lost(TimePoint sent, TimePoint now) {
  if (adaptive_) pacer_.on_loss(sent, now);
}

void SaAdmission::on_sm_changed(TimePoint now) {
  if (adaptive_) pacer_.restart(now);
}

}  // namespace ibat::core
