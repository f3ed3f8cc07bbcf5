// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twins' ClientReregister announcements (lab/umad-twin/port_event_bus.h): an announcement
// reaches the sockets of its port on its simulator only, every process attached to that port, and
// the socket of a process that died is removed by the next announcement to it.
#include "port_event_bus.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ibat::umad_twin {
namespace {

class PortEventBusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ibat-bus-test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST_F(PortEventBusTest, AnAnnouncementReachesItsPortOnItsFabricOnly) {
  PortEventBus mine(dir_, "fabric-a", 0x11, 100);
  PortEventBus mine_too(dir_, "fabric-a", 0x11, 200);  // a second process on the same port
  PortEventBus other_port(dir_, "fabric-a", 0x12, 300);
  PortEventBus other_fabric(dir_, "fabric-b", 0x11, 400);
  PortEventBus::announce(dir_, "fabric-a", 0x11);
  ASSERT_TRUE(readable(mine.fd()));
  EXPECT_EQ(mine.receive(), std::vector<std::uint64_t>{0x11});
  EXPECT_EQ(mine_too.receive(), std::vector<std::uint64_t>{0x11});
  EXPECT_FALSE(readable(other_port.fd()));
  EXPECT_FALSE(readable(other_fabric.fd()));
  EXPECT_TRUE(mine.receive().empty());
}

TEST_F(PortEventBusTest, ADeadProcessesSocketIsRemovedAndTheRestStillServed) {
  const std::string folder = dir_ + "/fabric-a";
  std::string dead;
  {
    PortEventBus gone(dir_, "fabric-a", 0x11, 7);
    dead = folder + "/0000000000000011-7";
    ASSERT_TRUE(std::filesystem::exists(dead));
  }
  EXPECT_FALSE(std::filesystem::exists(dead)) << "a clean exit removes its socket";
  // A process killed with SIGKILL leaves a bound name nobody reads: make one by hand.
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", dead.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
  PortEventBus alive(dir_, "fabric-a", 0x11, 8);
  PortEventBus::announce(dir_, "fabric-a", 0x11);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_EQ(alive.receive(), std::vector<std::uint64_t>{0x11});
}

TEST_F(PortEventBusTest, NobodyListeningIsNoError) { PortEventBus::announce(dir_, "fabric-z", 0x11); }

}  // namespace
}  // namespace ibat::umad_twin
