// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The IPoIB interface's HCA port from sysfs (ipoib_port.h).
#include "kernel/ipoib_port.h"

#include <charconv>
#include <filesystem>
#include <fstream>

namespace ibat::kernel {

std::optional<IpoibPort> locate_ipoib_port(const std::string& sysfs_root, const std::string& interface) {
  if (interface.empty() || interface.find('/') != std::string::npos || interface == "." || interface == "..")
    return std::nullopt;
  const std::filesystem::path net = std::filesystem::path(sysfs_root) / "class/net" / interface;
  std::error_code ec;
  std::optional<std::string> device;
  for (const auto& entry : std::filesystem::directory_iterator(net / "device/infiniband", ec)) {
    if (device) return std::nullopt;  // two CAs behind one device: not ours to guess
    device = entry.path().filename().string();
  }
  if (ec || !device) return std::nullopt;
  std::ifstream in(net / "dev_port");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  int dev_port = -1;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), dev_port);
  if (err != std::errc{} || end != text.data() + text.size() || dev_port < 0 || dev_port > 254) return std::nullopt;
  return IpoibPort{*device, dev_port + 1};
}

}  // namespace ibat::kernel
