// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// LogLimiter: what a client can make ibatd log stays bounded (docs/security.md). Per kind of line,
// the first `burst` of a window are logged; the rest are counted, and the first line of that kind
// after the window closes — or flush() at shutdown — says how many were left out:
// "… 19990 more '<kind>' lines in the last 60 s".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace ibat::server {

class LogLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit LogLimiter(std::size_t burst = 10, std::chrono::seconds window = std::chrono::seconds(60),
                      Clock clock = [] { return std::chrono::steady_clock::now(); });

  // True: log this line now. Logs the summary of `kind`'s finished window first, if any.
  bool allow(std::string_view kind);
  // Logs the summary of every kind with suppressed lines (shutdown).
  void flush();

 private:
  struct Window {
    std::chrono::steady_clock::time_point start;
    std::size_t logged = 0;
    std::uint64_t suppressed = 0;
  };
  void summarize(std::string_view kind, Window& w, std::chrono::steady_clock::time_point now);

  std::size_t burst_;
  std::chrono::seconds window_;
  Clock clock_;
  std::map<std::string, Window, std::less<>> windows_;
};

// The daemon's one limiter for lines a client can cause (denials, disconnects, refusals).
LogLimiter& client_log_limiter();

}  // namespace ibat::server
