// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Closed forms for runs too large to simulate event by event (labelled `analytic: true`).
#pragma once

#include "sim/scenario.h"

namespace ibat::sim {

// Whether `scenario` is computed in closed form rather than simulated.
bool needs_closed_form(const Scenario& scenario);
// per-process job-start: N*R*(N-1)*R queries; completion bounded by the SA rate and by each
// rank's connect window. Latency percentiles and drops are not modelled (left at 0, see note).
RunResult per_process_job_start(const Scenario& scenario);

}  // namespace ibat::sim
