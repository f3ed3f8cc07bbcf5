// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Loads a golden MAD capture (tests/unit/mad/golden/*.hex: '#' comment lines, then hex words).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ibat::mad::test {

// The bytes of golden/<name>; throws std::runtime_error if the file is missing or malformed.
std::vector<std::uint8_t> load_golden(const std::string& name);

}  // namespace ibat::mad::test
