// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the ibatd TOML config loader: any text must parse into a config whose Policy validates,
// or into error messages; never a crash.
#include <cstdlib>
#include <string_view>

#include "server/daemon/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ibat;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  server::ConfigResult result = server::parse_config(text, "fuzz.toml");
  if (result.ok() && !result.config.policy.validate().empty()) std::abort();
  if (result.ok()) (void)server::describe(result.config);
  return 0;
}
