// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Reads the hex dumps captured from OpenSM on the lab (see golden/README.md).
#include "golden_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ibat::mad::test {

std::vector<std::uint8_t> load_golden(const std::string& name) {
  const std::string path = std::string(IBAT_MAD_GOLDEN_DIR) + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  std::vector<std::uint8_t> bytes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word.size() % 2 != 0) throw std::runtime_error("odd hex word '" + word + "' in " + path);
      for (std::size_t i = 0; i < word.size(); i += 2) {
        bytes.push_back(static_cast<std::uint8_t>(std::stoul(word.substr(i, 2), nullptr, 16)));
      }
    }
  }
  return bytes;
}

}  // namespace ibat::mad::test
