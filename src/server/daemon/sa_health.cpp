// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA silence reporting (see sa_health.h).
#include "server/daemon/sa_health.h"

#include <ctime>

#include <fmt/format.h>

namespace ibat::server {

namespace {

std::string utc_text(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::optional<SaHealth::Line> SaHealth::on_result(core::Error error, std::chrono::system_clock::time_point now) {
  // Only the SA's silence counts: a cancelled query (port down, flush) says nothing about it.
  if (error == core::Error::cancelled) return std::nullopt;
  if (error == core::Error::timeout) {
    ++timeouts_;
    if (silent_since_) return std::nullopt;
    silent_since_ = now;
    return Line{true, fmt::format("SA not answering since {}: PathRecord queries time out (check the subnet "
                                  "manager with 'sminfo'); retrying", utc_text(now))};
  }
  if (!silent_since_) return std::nullopt;
  auto silent = std::chrono::duration_cast<std::chrono::seconds>(now - *silent_since_);
  Line line{false, fmt::format("SA answering again after {} s ({} queries timed out meanwhile)", silent.count(),
                               timeouts_)};
  silent_since_.reset();
  timeouts_ = 0;
  return line;
}

}  // namespace ibat::server
