// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's uevents: the datagram of the umad device's "remove" byte for byte in the kernel's
// format, the order and numbering of a CA's remove and add uevents, and the sockets they reach
// (every socket open, with the flags asked for, none after its close, never blocking the twin).
#include "uevent.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace ibat::umad_twin {
namespace {

using namespace std::string_literals;

std::string field(const std::string& datagram, const std::string& key) {
  for (std::size_t at = datagram.find('\0'); at != std::string::npos && at + 1 < datagram.size();) {
    const std::size_t end = datagram.find('\0', at + 1);
    const std::string f = datagram.substr(at + 1, end - at - 1);
    if (f.rfind(key + "=", 0) == 0) return f.substr(key.size() + 1);
    at = end;
  }
  return "<none>";
}

std::string header(const std::string& datagram) { return datagram.substr(0, datagram.find('\0')); }

TEST(Uevent, TheUmadDevicesRemoveIsTheKernelsDatagram) {
  const auto events = ca_uevents("remove", "mlx5_1", 1, 7);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1],
            "remove@/devices/virtual/infiniband_mad/umad1\0"
            "ACTION=remove\0"
            "DEVPATH=/devices/virtual/infiniband_mad/umad1\0"
            "SUBSYSTEM=infiniband_mad\0"
            "MAJOR=231\0"
            "MINOR=1\0"
            "DEVNAME=infiniband/umad1\0"
            "SEQNUM=8\0"s);
}

TEST(Uevent, ACaGoesIssmFirstAndComesUmadFirstItsOwnEventLast) {
  const auto gone = ca_uevents("remove", "mlx5_0", 0, 1);
  ASSERT_EQ(gone.size(), 3u);
  EXPECT_EQ(header(gone[0]), "remove@/devices/virtual/infiniband_mad/issm0");
  EXPECT_EQ(field(gone[0], "MINOR"), "64");
  EXPECT_EQ(field(gone[0], "DEVNAME"), "infiniband/issm0");
  EXPECT_EQ(header(gone[1]), "remove@/devices/virtual/infiniband_mad/umad0");
  EXPECT_EQ(header(gone[2]), "remove@/devices/virtual/infiniband/mlx5_0");
  EXPECT_EQ(field(gone[2], "SUBSYSTEM"), "infiniband");
  EXPECT_EQ(field(gone[2], "NAME"), "mlx5_0");
  EXPECT_EQ(field(gone[2], "DEVNAME"), "<none>") << "the CA has no device node";
  for (std::size_t i = 0; i < gone.size(); ++i) EXPECT_EQ(field(gone[i], "SEQNUM"), std::to_string(1 + i));

  const auto back = ca_uevents("add", "mlx5_0", 0, 4);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(header(back[0]), "add@/devices/virtual/infiniband_mad/umad0");
  EXPECT_EQ(field(back[0], "ACTION"), "add");
  EXPECT_EQ(header(back[1]), "add@/devices/virtual/infiniband_mad/issm0");
  EXPECT_EQ(header(back[2]), "add@/devices/virtual/infiniband/mlx5_0");
  EXPECT_EQ(field(back[2], "SEQNUM"), "6");
}

TEST(UeventSockets, EverySocketGetsEachUeventAndAClosedOneNone) {
  UeventSockets sockets;
  const int blocking = sockets.open(SOCK_DGRAM);
  const int nonblocking = sockets.open(SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC);
  ASSERT_GE(blocking, 0);
  ASSERT_GE(nonblocking, 0);
  EXPECT_TRUE(sockets.owns(blocking));
  EXPECT_FALSE(sockets.owns(STDIN_FILENO));
  EXPECT_FALSE(::fcntl(blocking, F_GETFL) & O_NONBLOCK);
  EXPECT_TRUE(::fcntl(nonblocking, F_GETFL) & O_NONBLOCK);
  EXPECT_TRUE(::fcntl(nonblocking, F_GETFD) & FD_CLOEXEC);

  const std::string event = "add@/x\0ACTION=add\0"s;
  sockets.broadcast(event);
  char buf[256];
  for (const int fd : {blocking, nonblocking}) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    ASSERT_EQ(n, static_cast<ssize_t>(event.size()));
    EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), event);
  }

  EXPECT_TRUE(sockets.forget(blocking));
  EXPECT_FALSE(sockets.forget(blocking));
  EXPECT_FALSE(sockets.owns(blocking));
  sockets.broadcast(event);
  EXPECT_EQ(::recv(blocking, buf, sizeof buf, MSG_DONTWAIT), -1) << "forgotten: nothing more comes";
  EXPECT_EQ(::recv(nonblocking, buf, sizeof buf, MSG_DONTWAIT), static_cast<ssize_t>(event.size()));
  ::close(blocking);
  EXPECT_TRUE(sockets.forget(nonblocking));
  ::close(nonblocking);
}

TEST(UeventSockets, AReaderThatNeverReadsLosesUeventsButNeverBlocksTheTwin) {
  UeventSockets sockets;
  const int fd = sockets.open(SOCK_DGRAM);
  ASSERT_GE(fd, 0);
  const std::string event(1000, 'x');
  for (int i = 0; i < 10000; ++i) sockets.broadcast(event);  // far more than a socket buffer holds
  int queued = 0;
  char buf[2048];
  while (::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) ++queued;
  EXPECT_GT(queued, 0);
  EXPECT_LT(queued, 10000);
  sockets.forget(fd);
  ::close(fd);
}

}  // namespace
}  // namespace ibat::umad_twin
