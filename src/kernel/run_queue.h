// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The host's run queue as core::SpinPolicy samples it: tasks running or ready to run (the fourth
// field of /proc/loadavg, "running/total", the caller included) and the CPUs online. A sample
// opens, reads and closes /proc/loadavg (a few microseconds).
#pragma once

#include <optional>
#include <string_view>

#include "core/spin_policy.h"

namespace ibat::kernel {

struct RunQueueSample {
  unsigned runnable;
  unsigned cpus;
};

// Nothing when /proc/loadavg cannot be read or parsed. Thread-safe.
std::optional<RunQueueSample> sample_run_queue();
// What takes the samples: sample_run_queue, or a test's stand-in.
using RunQueueSampler = std::optional<RunQueueSample> (*)();

// Gives `policy` a sample from `sampler` when it wants one at `now`.
inline void feed(core::SpinPolicy& policy, core::TimePoint now, RunQueueSampler sampler) {
  if (!policy.wants_sample(now)) return;
  if (auto sample = sampler())
    policy.on_sample(now, sample->runnable, sample->cpus);
  else
    policy.on_no_sample(now);
}

// The runnable count of a /proc/loadavg text ("0.52 0.58 0.59 2/345 12345" -> 2); nothing when
// the text is not of that form.
std::optional<unsigned> parse_loadavg_runnable(std::string_view text);

}  // namespace ibat::kernel
