// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A CA removed and added again, as the twin's MadLayer and fake sysfs give it (ib_umad_kill_port's
// behaviour): its open umad files die (read and write EIO, readable so that a blocked reader wakes,
// agent registration EPIPE), queued MADs and waiting sends are dropped without a word, opens fail
// with ENXIO until it is back, files opened after that work and the dead stay dead; the other CA
// is untouched. Its sysfs entries go and come back.
#include <arpa/inet.h>
#include <endian.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/ib_user_mad.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "fake_sysfs.h"
#include "mad_layer.h"
#include "umad_message.h"

namespace ibat::umad_twin {
namespace {

using namespace std::chrono_literals;

class CaRemovalTest : public ::testing::Test {
 protected:
  MadLayer layer{[this](unsigned ca, const SimRequest& r, bool) {
    sent.push_back({ca, r});
    return WireStatus::sent;
  }};
  std::vector<std::pair<unsigned, SimRequest>> sent;
  std::vector<int> opened;
  MadLayer::Clock::time_point t0 = MadLayer::Clock::now();

  void TearDown() override {
    for (int fd : opened) layer.close_file(fd);
  }
  int open(unsigned ca, bool nonblocking = true) {
    const int fd = layer.open_file(ca, nonblocking, true);
    if (fd >= 0) opened.push_back(fd);
    return fd;
  }
  // An SA agent that serves Get (0x01) requests.
  int sa_agent(int fd) {
    AgentSpec s;
    s.mgmt_class = 0x03;
    s.class_version = 2;
    s.methods.set(0x01);
    return layer.register_agent(fd, s);
  }
  static Bytes sa_get(std::uint64_t tid_value) {
    Bytes m(256, 0);
    m[0] = 1;
    m[1] = 0x03;
    m[2] = 2;
    m[3] = 0x01;
    set_tid(m, tid_value);
    return m;
  }
  static SimRequest from_wire(const Bytes& mad) {
    SimRequest r{};
    r.slid = htons(7);
    r.sqp = htonl(1);
    r.length = htobe64(256);
    std::memcpy(r.mad, mad.data(), 256);
    return r;
  }
  ssize_t read(int fd) {
    Bytes buf(64 + 256);
    return layer.read(fd, buf.data(), buf.size());
  }
  ssize_t write(int fd, const Bytes& u) { return layer.write(fd, u.data(), u.size(), t0); }
  static bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
  }
};

TEST_F(CaRemovalTest, AFileOfARemovedCaReadsAndWritesEIOAndStaysReadable) {
  const int dying = open(0);
  const int living = open(1);
  const int a0 = sa_agent(dying);
  const int a1 = sa_agent(living);
  ASSERT_GE(a0, 0);
  ASSERT_GE(a1, 0);
  layer.on_packet(0, from_wire(sa_get(0x42)), t0);
  layer.on_packet(1, from_wire(sa_get(0x43)), t0);
  ASSERT_TRUE(readable(dying));

  layer.remove_ca(0);
  EXPECT_FALSE(layer.ca_present(0));
  EXPECT_TRUE(layer.ca_present(1));
  EXPECT_TRUE(readable(dying)) << "readable: a poll on it wakes up";
  EXPECT_EQ(read(dying), -EIO) << "the MAD it had queued is dropped";
  EXPECT_EQ(read(dying), -EIO);
  EXPECT_TRUE(readable(dying)) << "still readable after reads";
  EXPECT_EQ(write(dying, umad(a0, sa_get(0x44), 100)), -EIO);
  EXPECT_EQ(layer.register_agent(dying, AgentSpec{}), -EPIPE) << "ib_umad_reg_agent once the device is gone";
  EXPECT_EQ(layer.unregister_agent(dying, static_cast<std::uint32_t>(a0)), -EINVAL) << "its agents are gone";
  layer.on_packet(0, from_wire(sa_get(0x45)), t0);
  EXPECT_EQ(layer.counters().undeliverable_requests, 1u) << "a request for the removed CA finds nobody";
  EXPECT_EQ(read(dying), -EIO);

  EXPECT_EQ(read(living), 64 + 256) << "the other CA's file keeps its MAD";
  EXPECT_EQ(write(living, umad(a1, sa_get(0x46))), 64 + 256);
}

TEST_F(CaRemovalTest, ReadersBlockedOnAFileWakeUpWithEIOWhenItsCaGoes) {
  const int fd = open(0, /*nonblocking=*/false);
  ASSERT_GE(sa_agent(fd), 0);
  auto first = std::async(std::launch::async, [&] { return read(fd); });
  auto second = std::async(std::launch::async, [&] { return read(fd); });
  EXPECT_EQ(first.wait_for(50ms), std::future_status::timeout) << "nothing to read yet: blocked";
  layer.remove_ca(0);
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(second.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(first.get(), -EIO);
  EXPECT_EQ(second.get(), -EIO);
  EXPECT_TRUE(readable(fd));
}

TEST_F(CaRemovalTest, SendsWaitingOnTheRemovedCaAreDroppedWithoutAWord) {
  const int fd = open(0);
  const int other = open(1);
  const int agent = sa_agent(fd);
  const int other_agent = sa_agent(other);
  ASSERT_EQ(write(fd, umad(agent, sa_get(0x42), 100, 3)), 64 + 256);
  ASSERT_EQ(write(other, umad(other_agent, sa_get(0x43), 100, 0)), 64 + 256);
  ASSERT_EQ(sent.size(), 2u);
  layer.remove_ca(0);
  layer.on_timer(t0 + 100ms);
  ASSERT_EQ(sent.size(), 2u) << "no retry on the removed CA";
  EXPECT_EQ(layer.counters().timeouts, 1u) << "only the other CA's send timed out";
  Bytes answer(sent[0].second.mad, sent[0].second.mad + 256);
  answer[3] = 0x81;
  layer.on_packet(0, from_wire(answer), t0 + 101ms);
  EXPECT_EQ(read(fd), -EIO) << "a late answer is not delivered";
  EXPECT_EQ(layer.on_timer(t0 + 1s), std::nullopt) << "nothing waits any more";
}

TEST_F(CaRemovalTest, OpensFailWithENXIOUntilTheCaIsBackAndTheDeadStayDead) {
  const int old_fd = open(0);
  layer.remove_ca(0);
  layer.remove_ca(0);  // already gone: nothing changes
  EXPECT_EQ(layer.open_file(0, true, true), -ENXIO);
  EXPECT_GE(open(1), 0) << "the other CA opens";

  layer.add_ca(0);
  EXPECT_TRUE(layer.ca_present(0));
  const int fd = open(0);
  ASSERT_GE(fd, 0);
  const int agent = sa_agent(fd);
  ASSERT_GE(agent, 0);
  EXPECT_FALSE(readable(fd));
  EXPECT_EQ(read(fd), -EAGAIN);
  layer.on_packet(0, from_wire(sa_get(0x42)), t0);
  EXPECT_EQ(read(fd), 64 + 256) << "a file opened after the add works";
  EXPECT_EQ(write(fd, umad(agent, sa_get(0x43))), 64 + 256);
  EXPECT_EQ(read(old_fd), -EIO) << "the file that died stays dead";
  EXPECT_EQ(sa_agent(old_fd), -EPIPE);
}

TEST(FakeSysfsRemoval, ARemovedCaLeavesNoEntryAndTheOtherKeepsItsOwn) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("twin-sysfs-" + std::to_string(::getpid()));
  FakeSysfs sysfs(root.string());
  CaRecords a, b;
  a.name = "mlx5_0";
  a.umad = 0;
  b.name = "mlx5_1";
  b.umad = 1;
  a.node_info[2] = b.node_info[2] = 1;  // CAs
  sysfs.write_abi();
  sysfs.write_ca(a);
  sysfs.write_ca(b);
  const fs::path cls = root / "sys/class";
  ASSERT_TRUE(fs::exists(cls / "infiniband/mlx5_1/ports/1/lid"));

  sysfs.remove_ca(b);
  EXPECT_FALSE(fs::exists(cls / "infiniband/mlx5_1"));
  EXPECT_FALSE(fs::exists(cls / "infiniband_mad/umad1"));
  EXPECT_FALSE(fs::exists(cls / "infiniband_mad/issm1"));
  EXPECT_TRUE(fs::exists(cls / "infiniband/mlx5_0/node_guid"));
  EXPECT_TRUE(fs::exists(cls / "infiniband_mad/umad0/ibdev"));
  EXPECT_TRUE(fs::exists(cls / "infiniband_mad/abi_version"));

  sysfs.write_ca(b);
  EXPECT_TRUE(fs::exists(cls / "infiniband_mad/umad1/ibdev"));
  sysfs.remove();
}

}  // namespace
}  // namespace ibat::umad_twin
