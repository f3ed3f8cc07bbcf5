// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Which HCA port an IPoIB interface runs on, read from sysfs as the kernel's ib_ipoib writes it:
// /sys/class/net/<if>/device is the HCA's parent device, whose infiniband/ folder holds the CA's
// name (mlx5_0), and /sys/class/net/<if>/dev_port is the port number minus one (ipoib sets
// dev_port = port - 1 on every interface it makes, P_Key children included). The kernel's
// neighbour entries of that interface belong to that port's endpoint table (docs/linux.md).
#pragma once

#include <optional>
#include <string>

namespace ibat::kernel {

struct IpoibPort {
  std::string device;  // "mlx5_0"
  int number = 0;      // 1
  bool operator==(const IpoibPort&) const = default;
};

// `sysfs_root`: "/sys" on a host; a test's own tree otherwise. Nothing when the interface has no
// HCA behind it, more than one CA (no way to tell which), or no readable dev_port.
std::optional<IpoibPort> locate_ipoib_port(const std::string& sysfs_root, const std::string& interface);

}  // namespace ibat::kernel
