// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Turns SA query outcomes into the two log lines an operator needs while the subnet administrator
// is silent: "SA not answering since T" once (warn) at the first timeout after an answer, and
// "SA answering again after N s" (info) at the first answer after that. Pure: the caller passes
// the time and logs the line.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/types.h"

namespace ibat::server {

class SaHealth {
 public:
  struct Line {
    bool warn;  // else info
    std::string text;
  };
  // One query's result at `now`; the line to log, if this result changes what the log says.
  std::optional<Line> on_result(core::Error error, std::chrono::system_clock::time_point now);
  // Since when the SA has not answered (timeouts only since its last answer); unset: answering.
  std::optional<std::chrono::system_clock::time_point> silent_since() const { return silent_since_; }

 private:
  std::optional<std::chrono::system_clock::time_point> silent_since_;
  std::uint64_t timeouts_ = 0;  // while silent
};

}  // namespace ibat::server
