// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The sysfs that libibumad reads (/sys/class/infiniband, /sys/class/infiniband_mad), written for
// the twin's CAs under a folder of the process's own, from ibsim's NodeInfo and PortInfo. The
// interposer (interpose.cpp) redirects every open/opendir/scandir of those paths here.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ibat::umad_twin {

struct CaRecords {
  std::string name;   // the CA name a process sees (mlx5_0, ibsim0, ...)
  unsigned umad = 0;  // its umad device number: /dev/infiniband/umad<N>, issm<N>
  std::array<std::uint8_t, 64> node_info{};
  std::array<std::uint8_t, 64> port_info{};
  std::array<std::uint8_t, 64> pkeys{};
};

// The port GUID the twin gives a CA's port (ibsim's rule: node GUID + port number).
std::uint64_t port_guid(const CaRecords& ca);
std::uint16_t lid(const CaRecords& ca);
unsigned port_number(const CaRecords& ca);

class FakeSysfs {
 public:
  explicit FakeSysfs(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  void write_abi();                       // infiniband_mad/abi_version
  void write_ca(const CaRecords& ca);     // the CA's folder, its umad/issm entries and its port
  void write_port(const CaRecords& ca);   // ports/<n>/: refreshed before each read of the CA
  void remove_ca(const CaRecords& ca);    // what write_ca wrote: the CA is gone
  void remove();                          // the whole tree (at exit)

  // "/sys/class/infiniband..." -> "<root>/sys/class/infiniband..."; empty when not a path of ours.
  std::string redirect(const char* path) const;

 private:
  std::string root_;
};

}  // namespace ibat::umad_twin
