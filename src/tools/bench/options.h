// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench: command-line options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibat.h"

namespace ibat::bench {

struct Options {
  std::string socket;                  // ibatd's native socket
  std::vector<ibat_target> dgids;      // destinations that exist (cached after the warm-up)
  std::vector<std::string> dgid_text;  // as given, for the report
  double cached_seconds = 3.0;         // length of the pipelined cached run
  unsigned depth = 256;                // requests outstanding in the cached run
  unsigned latency_samples = 20000;    // single synchronous resolves timed one by one
  double uncached_seconds = 3.0;       // length of the forced-SA run
  unsigned uncached_depth = 0;         // forced-SA requests outstanding; 0: one per destination
  bool json = false;
};

// Parses argv; on --help or an error prints and returns nullopt with the exit code in exit_code.
std::optional<Options> parse_options(int argc, char** argv, int& exit_code);

}  // namespace ibat::bench
