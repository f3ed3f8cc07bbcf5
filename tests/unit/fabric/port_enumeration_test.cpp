// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// plan_ports: which HCA ports ibatd serves of those a host has (every InfiniBand port by default,
// Ethernet ports skipped with a line; a configured list exactly, with clear errors).
#include <gtest/gtest.h>

#include "fabric/port_enumeration.h"

namespace ibat::fabric {
namespace {

std::vector<std::string> names(const std::vector<HcaPort>& ports) {
  std::vector<std::string> out;
  for (const HcaPort& p : ports) out.push_back(p.name());
  return out;
}

const std::vector<HcaPort> kHost = {
    {"mlx5_0", 1, "InfiniBand", true}, {"mlx5_1", 1, "InfiniBand", false}, {"mlx5_2", 1, "Ethernet", true},
    {"mlx5_3", 1, "InfiniBand", true}, {"mlx5_3", 2, "", true},  // an old kernel: no link_layer file
};

TEST(PlanPorts, EveryInfinibandPortByDefaultAndEthernetSkippedWithALine) {
  PortPlan plan = plan_ports(kHost, {});
  EXPECT_EQ(plan.error, "");
  EXPECT_EQ(names(plan.serve), (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1", "mlx5_3:1", "mlx5_3:2"}));
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0], "mlx5_2:1: link layer Ethernet, not served (no SA on it)");
}

TEST(PlanPorts, AListServesExactlyItsPortsAndADeviceNameItsInfinibandPorts) {
  PortPlan plan = plan_ports(kHost, {"mlx5_3:2", "mlx5_0", "mlx5_0:1"});
  EXPECT_EQ(plan.error, "");
  EXPECT_EQ(names(plan.serve), (std::vector<std::string>{"mlx5_3:2", "mlx5_0:1"}));  // listed once
}

TEST(PlanPorts, AnUnknownOrEthernetPortIsAnErrorNamingWhatTheHostHas) {
  PortPlan unknown = plan_ports(kHost, {"mlx5_0:1", "mlx5_9:1"});
  EXPECT_EQ(unknown.error,
            "[fabric] ports: no port mlx5_9:1 on this host (found: mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1, mlx5_3:2)");
  PortPlan ethernet = plan_ports(kHost, {"mlx5_2:1"});
  EXPECT_EQ(ethernet.error, "[fabric] ports: mlx5_2:1 has link layer Ethernet, not InfiniBand");
  PortPlan ethernet_device = plan_ports(kHost, {"mlx5_2"});
  EXPECT_EQ(ethernet_device.error, "[fabric] ports: none of the listed ports is InfiniBand");
}

TEST(PlanPorts, AHostWithoutInfinibandPortsIsAnError) {
  EXPECT_EQ(plan_ports({{"mlx5_2", 1, "Ethernet", true}}, {}).error,
            "no InfiniBand port on this host (found: mlx5_2:1); check `ibstat`");
  EXPECT_EQ(plan_ports({}, {}).error, "no InfiniBand port on this host (found: none); check `ibstat`");
}

}  // namespace
}  // namespace ibat::fabric
