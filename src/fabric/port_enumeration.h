// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Which HCA ports ibatd serves: every InfiniBand port libibumad finds (the default), the ports the
// configuration lists, or the one --ca/--port names. Reading the ports (enumerate_ports, the
// sysfs libibumad reads: /sys/class/infiniband/*/ports/*/link_layer and state) is apart from the
// choice (plan_ports, pure), so the choice is tested without a host.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ibat::fabric {

// How ibatd names a port everywhere (logs, --port, stats): "mlx5_0:1".
inline std::string port_name(const std::string& ca, int number) { return ca + ":" + std::to_string(number); }

struct HcaPort {
  std::string ca;          // "mlx5_0"
  int number = 0;          // 1
  std::string link_layer;  // "InfiniBand", "Ethernet" ("" from old kernels: InfiniBand)
  bool active = false;
  std::string name() const { return port_name(ca, number); }
  bool infiniband() const { return link_layer.empty() || link_layer == "InfiniBand"; }
};

// Every port of every CA, in libibumad's CA order. Empty, with `error` saying why, when umad
// cannot be read.
std::vector<HcaPort> enumerate_ports(std::string& error);
// The port umad_get_port picks for `ca` ("" first CA) and `number` (0 first active): what one
// FabricPort opens with --ca/--port. Unset, with `error`, when there is none.
std::optional<HcaPort> find_port(const std::string& ca, int number, std::string& error);

struct PortPlan {
  std::vector<HcaPort> serve;
  std::vector<std::string> skipped;  // one line per port left out, saying why
  std::string error;                 // non-empty: nothing can be served as configured
};
// `wanted` empty: every InfiniBand port of `found`; else exactly the ports it names ("mlx5_0:1",
// or "mlx5_0" for each IB port of that CA). A name not found, or an Ethernet port, is an error.
PortPlan plan_ports(const std::vector<HcaPort>& found, const std::vector<std::string>& wanted);
// While ibatd runs (a CA came or went): the InfiniBand ports of `found` that `wanted` names (all of
// them when empty). A listed port that is not there now is simply not served: no error.
std::vector<HcaPort> present_ports(const std::vector<HcaPort>& found, const std::vector<std::string>& wanted);

}  // namespace ibat::fabric
