// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Time for core/: a monotonic time point injected by the owner (the event loop, a test or the
// simulator). core/ never reads a system clock itself.
#pragma once

#include <chrono>

namespace ibat::core {

using Duration = std::chrono::nanoseconds;
// Monotonic time since an arbitrary epoch chosen by the owner.
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

// Clock advanced by hand: tests and the discrete-event simulator.
class ManualClock final : public Clock {
 public:
  TimePoint now() const override { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_{Duration{1'000'000'000}};
};

// The real monotonic clock, used by the daemon.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
  }
};

}  // namespace ibat::core
