// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's uevents of HCAs coming and going: datagrams laid out as the kernel's
// kobject_uevent() sends them decode to their action, path and subsystem; only an add or remove
// of an HCA (infiniband) or of its umad devices (infiniband_mad) changes ports; udev's messages,
// garbage and half messages are refused. And the socket itself: a uevent socket opens here.
#include <string>

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include "kernel/device_events.h"

namespace ibat::kernel {
namespace {

std::optional<UEvent> parse(const std::string& text) {
  return parse_uevent(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

std::string uevent(const std::string& action, const std::string& devpath, const std::string& subsystem) {
  using namespace std::string_literals;
  return action + "@" + devpath + "\0ACTION="s + action + "\0DEVPATH="s + devpath + "\0SUBSYSTEM="s + subsystem +
         "\0SEQNUM=812\0"s;
}

TEST(UEvent, AnHcasAndItsUmadDevicesAddAndRemoveChangePorts) {
  auto umad = parse(uevent("add", "/devices/pci0000:00/0000:00:03.0/infiniband_mad/umad2", "infiniband_mad"));
  ASSERT_TRUE(umad);
  EXPECT_EQ(umad->action, "add");
  EXPECT_EQ(umad->devpath, "/devices/pci0000:00/0000:00:03.0/infiniband_mad/umad2");
  EXPECT_EQ(umad->subsystem, "infiniband_mad");
  EXPECT_TRUE(umad->changes_ports());
  auto ca = parse(uevent("remove", "/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_2", "infiniband"));
  ASSERT_TRUE(ca);
  EXPECT_TRUE(ca->changes_ports());
}

TEST(UEvent, OtherSubsystemsAndActionsAreNoChangeOfPorts) {
  auto net = parse(uevent("add", "/devices/virtual/net/ib0", "net"));
  ASSERT_TRUE(net);
  EXPECT_FALSE(net->changes_ports());
  auto change = parse(uevent("change", "/devices/virtual/infiniband_mad/umad0", "infiniband_mad"));
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->changes_ports());
}

TEST(UEvent, WhatIsNotAKernelUeventIsRefused) {
  using namespace std::string_literals;
  EXPECT_FALSE(parse(""));
  EXPECT_FALSE(parse("libudev\0\xfe\xed\xca\xfe"s)) << "udev's re-broadcast (group 2), never ours";
  EXPECT_FALSE(parse("add@/devices/x"s)) << "no fields";
  EXPECT_FALSE(parse("add/devices/x\0ACTION=add\0SUBSYSTEM=infiniband\0"s)) << "no '@' in the header";
  EXPECT_FALSE(parse("@/devices/x\0ACTION=add\0SUBSYSTEM=infiniband\0"s));
  EXPECT_FALSE(parse("add@/devices/x\0SUBSYSTEM=infiniband\0"s)) << "no ACTION";
  EXPECT_FALSE(parse("add@/devices/x\0ACTION=add\0"s)) << "no SUBSYSTEM";
  EXPECT_FALSE(parse("add@/devices/x\0ACTION=remove\0SUBSYSTEM=infiniband\0"s)) << "header and ACTION disagree";
  auto unterminated = parse("add@/d\0ACTION=add\0SUBSYSTEM=infiniband"s);  // the last field without NUL
  ASSERT_TRUE(unterminated);
  EXPECT_EQ(unterminated->subsystem, "infiniband");
}

TEST(DeviceEvents, TheKernelsUeventSocketOpensAndStops) {
  asio::io_context loop;
  DeviceEvents events(loop, [](const UEvent&) {});
  ASSERT_TRUE(events.start()) << "NETLINK_KOBJECT_UEVENT is open to every user";
  EXPECT_TRUE(events.stats().running);
  events.stop();
  EXPECT_FALSE(events.stats().running);
}

}  // namespace
}  // namespace ibat::kernel
