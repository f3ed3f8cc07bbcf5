// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's verbs devices (lab/umad-twin/verbs_devices.h): the events an HCA driver raises for a
// port's PortInfo and P_Key changes, and the async-event calls as libibverbs has them (a device
// per CA by name, an async fd readable while an event waits, EAGAIN when non-blocking and empty,
// events only to the contexts of their CA, in order).
#include "verbs_devices.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <array>
#include <cerrno>
#include <string>

namespace ibat::umad_twin {
namespace {

using Record = std::array<std::uint8_t, 64>;

Record active_port(std::uint16_t lid, std::uint16_t sm_lid) {
  Record r{};
  r[8] = 0xFE;
  r[9] = 0x80;
  r[16] = static_cast<std::uint8_t>(lid >> 8);
  r[17] = static_cast<std::uint8_t>(lid);
  r[18] = static_cast<std::uint8_t>(sm_lid >> 8);
  r[19] = static_cast<std::uint8_t>(sm_lid);
  r[32] = 0x54;  // speed | PortState Active
  return r;
}

TEST(PortChanges, EachFieldItsEvent) {
  const Record pkeys{};
  const Record base = active_port(5, 1);
  EXPECT_TRUE(port_changes(base, base, pkeys, pkeys).empty());
  EXPECT_EQ(port_changes(base, active_port(9, 1), pkeys, pkeys), std::vector{IBV_EVENT_LID_CHANGE});
  EXPECT_EQ(port_changes(base, active_port(5, 2), pkeys, pkeys), std::vector{IBV_EVENT_SM_CHANGE});
  Record sl = base;
  sl[36] = 0x41;
  EXPECT_EQ(port_changes(base, sl, pkeys, pkeys), std::vector{IBV_EVENT_SM_CHANGE}) << "MasterSMSL";
  Record prefix = base;
  prefix[15] = 1;
  EXPECT_EQ(port_changes(base, prefix, pkeys, pkeys), std::vector{IBV_EVENT_GID_CHANGE});
  Record other_pkeys{};
  other_pkeys[0] = 0xFF;
  EXPECT_EQ(port_changes(base, base, pkeys, other_pkeys), std::vector{IBV_EVENT_PKEY_CHANGE});
}

TEST(PortChanges, DownIsAnErrorFirstAndActiveComesLast) {
  const Record pkeys{};
  Record down = active_port(0, 0);
  down[32] = 0x51;
  EXPECT_EQ(port_changes(active_port(5, 1), down, pkeys, pkeys),
            (std::vector{IBV_EVENT_PORT_ERR, IBV_EVENT_LID_CHANGE, IBV_EVENT_SM_CHANGE}));
  EXPECT_EQ(port_changes(down, active_port(5, 1), pkeys, pkeys),
            (std::vector{IBV_EVENT_LID_CHANGE, IBV_EVENT_SM_CHANGE, IBV_EVENT_PORT_ACTIVE}));
  Record armed = active_port(5, 1);
  armed[32] = 0x53;
  EXPECT_TRUE(port_changes(down, armed, pkeys, pkeys).size() == 2) << "Armed is not yet active";
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(VerbsDevices, ListedByNameAndOpenedWithAnAsyncFd) {
  VerbsDevices verbs({"mlx5_0", "mlx5_1"});
  int count = -1;
  ibv_device** list = verbs.list(&count);
  ASSERT_EQ(count, 2);
  EXPECT_STREQ(list[0]->name, "mlx5_0");
  EXPECT_STREQ(list[1]->name, "mlx5_1");
  EXPECT_EQ(list[2], nullptr);
  EXPECT_TRUE(verbs.owns(list[1]));
  ibv_context* context = verbs.open(list[1]);
  VerbsDevices::free_list(list);
  ASSERT_NE(context, nullptr);
  EXPECT_TRUE(verbs.owns(context));
  EXPECT_TRUE(verbs.watched(1));
  EXPECT_FALSE(verbs.watched(0));
  ibv_device stranger{};
  errno = 0;
  EXPECT_EQ(verbs.open(&stranger), nullptr);
  EXPECT_EQ(errno, ENODEV);
  EXPECT_EQ(verbs.close(context), 0);
  EXPECT_FALSE(verbs.watched(1));
  EXPECT_FALSE(verbs.owns(context));
}

TEST(VerbsDevices, EventsReachTheirCasContextsInOrderAndTheFdSaysSo) {
  VerbsDevices verbs({"mlx5_0", "mlx5_1"});
  ibv_device** list = verbs.list(nullptr);
  ibv_context* first = verbs.open(list[0]);
  ibv_context* second = verbs.open(list[1]);
  VerbsDevices::free_list(list);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(fcntl(first->async_fd, F_SETFL, fcntl(first->async_fd, F_GETFL) | O_NONBLOCK), 0);
  ibv_async_event event{};
  errno = 0;
  EXPECT_EQ(verbs.get_event(first, &event), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(readable(first->async_fd));

  verbs.raise(0, IBV_EVENT_LID_CHANGE, 1);
  verbs.raise(0, IBV_EVENT_CLIENT_REREGISTER, 1);
  EXPECT_TRUE(readable(first->async_fd));
  EXPECT_FALSE(readable(second->async_fd)) << "another CA's context";
  ASSERT_EQ(verbs.get_event(first, &event), 0);
  EXPECT_EQ(event.event_type, IBV_EVENT_LID_CHANGE);
  EXPECT_EQ(event.element.port_num, 1);
  ASSERT_EQ(verbs.get_event(first, &event), 0);
  EXPECT_EQ(event.event_type, IBV_EVENT_CLIENT_REREGISTER);
  EXPECT_FALSE(readable(first->async_fd));
  EXPECT_EQ(verbs.get_event(first, &event), -1);
  EXPECT_EQ(verbs.raised(), 2u);
  verbs.close(first);
  verbs.close(second);
}

}  // namespace
}  // namespace ibat::umad_twin
