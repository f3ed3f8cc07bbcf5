// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Output of ibat-sim: the --json object and a one-line human summary.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/scenario.h"

namespace ibat::sim {

// Every field of RunResult (a --warm-s warm-up's as the object `warmup`) plus the scenario,
// events_per_s and peak_rss_mb.
nlohmann::json to_json(const Scenario& scenario, const RunResult& result);
std::string summary_line(const Scenario& scenario, const RunResult& result);
// Peak resident set size of this process so far (getrusage), MiB.
double peak_rss_mb();

}  // namespace ibat::sim
