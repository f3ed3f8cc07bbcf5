// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd logging: spdlog to stderr (journald under systemd), level from the config.
#pragma once

#include <memory>
#include <string>

#include <spdlog/formatter.h>

namespace ibat::server {

// Installs the stderr logger as spdlog's default and sets the level ("trace" ... "off"). When
// stderr is the journal's stream ($JOURNAL_STREAM, journal_stream.h) each line starts with its
// syslog priority ("<3>[error] ...", sd-daemon(3)) and has no timestamp; otherwise it is
// "2026-01-02 03:04:05.678 ibatd[PID] error: ...".
void setup_logging(const std::string& level);
void set_log_level(const std::string& level);

// The line format setup_logging() gives the logger: the journal's (`journal`) or the terminal's.
std::unique_ptr<spdlog::formatter> make_log_formatter(bool journal);

}  // namespace ibat::server
