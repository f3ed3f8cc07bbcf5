// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// spdlog set-up for ibatd: one stderr sink; on the journal's stream, priority prefixes and no
// timestamps (journald records its own).
#include "server/daemon/logging.h"

#include <unistd.h>

#include <cstdlib>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "server/daemon/journal_stream.h"

namespace ibat::server {
namespace {

// The syslog priority journald reads from a line's "<N>" prefix (sd-daemon(3): 2 crit, 3 err,
// 4 warning, 6 info, 7 debug).
int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;  // debug, trace
  }
}

// The pattern flag %* : the line's syslog priority digit.
class PriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    dest.push_back(static_cast<char>('0' + syslog_priority(msg.level)));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<PriorityFlag>(); }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (journal)
    formatter->add_flag<PriorityFlag>('*').set_pattern("<%*>[%l] %v");
  else
    formatter->set_pattern("%Y-%m-%d %H:%M:%S.%e ibatd[%P] %l: %v");
  return formatter;
}

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("ibatd");
  logger->set_formatter(make_log_formatter(is_journal_stream(STDERR_FILENO, std::getenv("JOURNAL_STREAM"))));
  spdlog::set_default_logger(logger);
  set_log_level(level);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace ibat::server
