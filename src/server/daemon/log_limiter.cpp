// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The per-kind log rate limit (log_limiter.h).
#include "server/daemon/log_limiter.h"

#include <spdlog/spdlog.h>

namespace ibat::server {

LogLimiter::LogLimiter(std::size_t burst, std::chrono::seconds window, Clock clock)
    : burst_(burst), window_(window), clock_(std::move(clock)) {}

bool LogLimiter::allow(std::string_view kind) {
  const auto now = clock_();
  auto it = windows_.find(kind);
  if (it == windows_.end()) it = windows_.emplace(std::string(kind), Window{now, 0, 0}).first;
  Window& w = it->second;
  if (now - w.start >= window_) {
    summarize(kind, w, now);
    w = Window{now, 0, 0};
  }
  if (w.logged < burst_) {
    ++w.logged;
    return true;
  }
  ++w.suppressed;
  return false;
}

void LogLimiter::summarize(std::string_view kind, Window& w, std::chrono::steady_clock::time_point now) {
  if (w.suppressed == 0) return;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - w.start).count();
  spdlog::warn("... {} more '{}' lines in the last {} s (not logged; counted in ibat stats)", w.suppressed, kind,
               seconds);
  w.suppressed = 0;
}

void LogLimiter::flush() {
  const auto now = clock_();
  for (auto& [kind, w] : windows_) summarize(kind, w, now);
}

LogLimiter& client_log_limiter() {
  static LogLimiter limiter;
  return limiter;
}

}  // namespace ibat::server
