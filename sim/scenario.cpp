// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Names of workloads and strategies as the CLI and the JSON output spell them.
#include "sim/scenario.h"

namespace ibat::sim {

std::optional<Workload> workload_from_string(std::string_view s) {
  if (s == "job-start") return Workload::job_start;
  if (s == "churn") return Workload::churn;
  if (s == "sm-restart") return Workload::sm_restart;
  if (s == "boot") return Workload::boot;
  if (s == "idle") return Workload::idle;
  return std::nullopt;
}

std::optional<Strategy> strategy_from_string(std::string_view s) {
  if (s == "per-process") return Strategy::per_process;
  if (s == "flush-on-sm-change") return Strategy::flush_on_sm_change;
  if (s == "ibat") return Strategy::ibat;
  return std::nullopt;
}

std::optional<Pace> pace_from_string(std::string_view s) {
  if (s == "adaptive") return Pace::policy;
  if (s == "fixed") return Pace::fixed;
  if (s == "oracle") return Pace::oracle;
  return std::nullopt;
}

std::string_view to_string(Pace p) {
  switch (p) {
    case Pace::policy: return "adaptive";
    case Pace::fixed: return "fixed";
    case Pace::oracle: return "oracle";
  }
  return "?";
}

std::string_view to_string(Workload w) {
  switch (w) {
    case Workload::job_start: return "job-start";
    case Workload::churn: return "churn";
    case Workload::sm_restart: return "sm-restart";
    case Workload::boot: return "boot";
    case Workload::idle: return "idle";
  }
  return "?";
}

std::string_view to_string(Strategy s) {
  switch (s) {
    case Strategy::per_process: return "per-process";
    case Strategy::flush_on_sm_change: return "flush-on-sm-change";
    case Strategy::ibat: return "ibat";
  }
  return "?";
}

}  // namespace ibat::sim
