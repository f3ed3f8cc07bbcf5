// ibatd logging: spdlog to stderr (journald under systemd), level from the config.
#pragma once

#include <string>

namespace ibat::server {

// Installs the stderr logger as spdlog's default and sets the level ("trace" ... "off").
void setup_logging(const std::string& level);
void set_log_level(const std::string& level);

}  // namespace ibat::server
