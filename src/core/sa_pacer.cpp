// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA congestion control (see sa_pacer.h).
#include "core/sa_pacer.h"

#include <algorithm>
#include <cmath>

namespace ibat::core {
namespace {

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }
Duration from_seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

}  // namespace

SaPacer::SaPacer(const SaRoundTrip& sa, std::uint32_t max_window, std::uint64_t seed)
    : sa_(sa), max_window_(max_window), prng_(seed) {
  clamp();
}

void SaPacer::set_max_window(std::uint32_t max_window) {
  max_window_ = max_window;
  clamp();
}

void SaPacer::clamp() { window_ = std::clamp(window_, kMinWindow, std::max(1.0, max_window_)); }

std::uint32_t SaPacer::allowed_inflight() const {
  const auto w = static_cast<std::uint32_t>(window_);
  return std::clamp<std::uint32_t>(w, 1, static_cast<std::uint32_t>(std::max(1.0, max_window_)));
}

void SaPacer::on_send(TimePoint now) {
  const double gap_s = std::min(seconds(sa_.srtt()) / window_, seconds(kMaxGap)) * (0.5 + prng_.uniform01());
  next_send_ = now + from_seconds(gap_s);
}

void SaPacer::on_answer(TimePoint sent, TimePoint now) {
  const double delay = seconds(sa_.queue(std::max(Duration::zero(), now - sent)));
  round_delay_s_ = delay_samples_ == 0 ? delay : std::min(round_delay_s_, delay);
  ++delay_samples_;
  if (now >= round_end_) end_round(now);
}

// The queries in flight when the SA is swamped are lost together: one halving for all of them,
// as in TCP NewReno a query sent before the last halving does not halve again.
void SaPacer::restart(TimePoint now) {
  window_ = std::max(window_, kInitialWindow);
  clamp();
  next_send_ = std::min(next_send_, now);
  last_cut_ = now;
  start_round(now);
}

void SaPacer::on_loss(TimePoint sent, TimePoint now) {
  if (sent < last_cut_) return;
  window_ *= 0.5;
  clamp();
  last_cut_ = now;
  start_round(now);
}

// Once per round trip, from the smallest queueing delay of its answers (a queue that stands for a
// whole round, not one slow answer): queueing beyond the target shrinks the window in proportion to the
// excess, queueing below it lets it grow.
void SaPacer::end_round(TimePoint now) {
  if (delay_samples_ > 0) {
    const double delay = round_delay_s_;
    const double target = seconds(kSaQueueTarget);
    const double base = seconds(sa_.base());
    if (delay > target) {
      window_ *= std::max(0.5, 1.0 - kDelayBeta * (delay - target) / delay);
    } else if (delay <= target / 10) {
      window_ *= 1.0 + kMaxGrowth;
    } else {  // FAST TCP's update: kQueueShare of this node's queries wait in the SA's queue
      const double fast = window_ * base / (base + delay) + kQueueShare;
      window_ = std::min(2 * window_, (1 - kFastGain) * window_ + kFastGain * fast);
    }
  }
  clamp();
  start_round(now);
}

void SaPacer::start_round(TimePoint now) {
  round_delay_s_ = 0;
  delay_samples_ = 0;
  round_end_ = now + sa_.srtt();
}

}  // namespace ibat::core
