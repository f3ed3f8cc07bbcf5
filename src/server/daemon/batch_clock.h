// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// BatchClock: the daemon's monotonic clock, which a socket server can hold still while it handles
// the frames of one read, so that a batch of requests costs one clock read, not one per request
// (docs/protocol.md, "Batching"). Outside a batch every now() reads the steady clock.
#pragma once

#include <cstdint>
#include <optional>

#include "core/clock.h"

namespace ibat::server {

class BatchClock final : public core::Clock {
 public:
  core::TimePoint now() const override {
    if (depth_ == 0) return read();
    if (!held_) held_ = read();
    return *held_;
  }

  // While one lives, now() returns the time of its first call (scopes may nest).
  class Batch {
   public:
    explicit Batch(BatchClock& clock) : clock_(clock) { ++clock_.depth_; }
    ~Batch() {
      if (--clock_.depth_ == 0) clock_.held_.reset();
    }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    BatchClock& clock_;
  };

  // Reads of the steady clock so far (tests).
  std::uint64_t reads() const { return reads_; }

 private:
  core::TimePoint read() const {
    ++reads_;
    return core::SteadyClock{}.now();
  }

  unsigned depth_ = 0;
  mutable std::optional<core::TimePoint> held_;
  mutable std::uint64_t reads_ = 0;
};

}  // namespace ibat::server
