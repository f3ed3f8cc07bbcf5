// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SpinPolicy: whether a thread that waits for a reply may poll for it instead of sleeping, for
// libibat's synchronous calls (client::Session::wait) and ibatd's loop (server::BusyPoll). Polling
// saves the wake-up of a sleeping CPU, but only costs nothing while CPUs are idle: when the host
// has more tasks ready to run than CPUs, a poller takes a CPU from work that wants it (an MPI rank,
// the other side of the exchange) and is itself descheduled for time slices, while a sleeper gets
// a prompt wake-up. So polling stops once kCrowdedSamples samples in a row, kSampleEvery apart,
// found more runnable tasks than CPUs (one crowded sample is often a kernel thread passing by),
// and resumes with the first sample that does not. Pure: the caller reads the clock and the host's
// run queue (kernel/run_queue.h) (docs/performance.md, "One resolve at a time").
#pragma once

#include <chrono>
#include <cstdint>

#include "core/clock.h"

namespace ibat::core {

class SpinPolicy {
 public:
  static constexpr Duration kSampleEvery = std::chrono::milliseconds(10);
  static constexpr unsigned kCrowdedSamples = 2;

  // Whether the caller should take a sample of the run queue before deciding at `now`.
  bool wants_sample(TimePoint now) const { return now >= next_sample_; }
  // A sample at `now`: `runnable` tasks running or ready on the host (the caller included),
  // `cpus` online. No sample (the run queue cannot be read) counts as crowded.
  void on_sample(TimePoint now, unsigned runnable, unsigned cpus) {
    next_sample_ = now + kSampleEvery;
    if (runnable <= cpus) {
      crowded_in_a_row_ = 0;
      return;
    }
    if (++crowded_in_a_row_ == kCrowdedSamples) ++stops_;
  }
  void on_no_sample(TimePoint now) { on_sample(now, 1, 0); }

  bool may_spin() const { return crowded_in_a_row_ < kCrowdedSamples; }
  // Times polling stopped because the host was crowded.
  std::uint64_t stops() const { return stops_; }

 private:
  TimePoint next_sample_{};
  unsigned crowded_in_a_row_ = 0;
  std::uint64_t stops_ = 0;
};

}  // namespace ibat::core
