// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd's line formats: on the journal's stream every line starts with its syslog priority
// ("<3>" for an error) so `journalctl -p err` selects it; elsewhere lines keep their timestamp,
// process and level words.
#include "server/daemon/logging.h"

#include <cctype>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace ibat::server {
namespace {

std::string log_all_levels(bool journal) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(make_log_formatter(journal));
  logger.set_level(spdlog::level::trace);
  logger.critical("c");
  logger.error("e");
  logger.warn("w");
  logger.info("i");
  logger.debug("d");
  logger.trace("t");
  return out.str();
}

// `text` with each run of digits replaced by one '9': the shape of a timestamped line.
std::string shape(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digit || out.empty() || out.back() != '9') out += digit ? '9' : c;
  }
  return out;
}

TEST(Logging, JournalLinesStartWithTheirSyslogPriority) {
  EXPECT_EQ(log_all_levels(true),
            "<2>[critical] c\n<3>[error] e\n<4>[warning] w\n<6>[info] i\n<7>[debug] d\n<7>[trace] t\n");
}

TEST(Logging, TerminalLinesKeepTheirTimestampAndHaveNoPriority) {
  const std::string text = log_all_levels(false);
  EXPECT_EQ(shape(text),
            "9-9-9 9:9:9.9 ibatd[9] critical: c\n9-9-9 9:9:9.9 ibatd[9] error: e\n9-9-9 9:9:9.9 ibatd[9] warning: w\n"
            "9-9-9 9:9:9.9 ibatd[9] info: i\n9-9-9 9:9:9.9 ibatd[9] debug: d\n9-9-9 9:9:9.9 ibatd[9] trace: t\n")
      << text;
}

}  // namespace
}  // namespace ibat::server
