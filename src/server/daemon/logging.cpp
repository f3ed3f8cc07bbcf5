// spdlog set-up for ibatd: one stderr sink; without timestamps when journald records the stream.
#include "server/daemon/logging.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ibat::server {

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("ibatd");
  // journald adds its own timestamps and process name.
  logger->set_pattern(std::getenv("JOURNAL_STREAM") != nullptr ? "[%l] %v"
                                                                : "%Y-%m-%d %H:%M:%S.%e ibatd[%P] %l: %v");
  spdlog::set_default_logger(logger);
  set_log_level(level);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace ibat::server
