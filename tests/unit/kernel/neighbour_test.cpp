// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel neighbour table feed: the decoder on messages built as the kernel builds them (IPoIB
// addresses included), the mirror's dump reconciliation, and the monitor against the real kernel
// in a network namespace of the test's own (veth links: not IPoIB, so counted and ignored), with a
// 10,000-change burst into a tiny socket buffer that must end in a re-dump and the exact table.
#include <sched.h>
#include <fcntl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include "kernel/ipoib_port.h"
#include "kernel/neighbour_message.h"
#include "kernel/neighbour_mirror.h"
#include "kernel/neighbour_monitor.h"

namespace ibat::kernel {
namespace {

using namespace std::chrono_literals;

const core::HwAddr kHw = *core::HwAddr::parse("80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:00:00:01");

// An rtnetlink neighbour message as the kernel's neigh_fill_info() lays it out.
std::vector<std::uint8_t> neighbour(std::uint16_t type, std::uint16_t state, const std::string& ip,
                                    const std::vector<std::uint8_t>& lladdr, int ifindex = 3) {
  std::vector<std::uint8_t> out(NLMSG_LENGTH(sizeof(ndmsg)), 0);
  ndmsg nd{};
  const bool v6 = ip.find(':') != std::string::npos;
  nd.ndm_family = v6 ? AF_INET6 : AF_INET;
  nd.ndm_ifindex = ifindex;
  nd.ndm_state = state;
  nd.ndm_type = RTN_UNICAST;
  std::memcpy(out.data() + NLMSG_HDRLEN, &nd, sizeof(nd));
  auto put = [&](std::uint16_t attr_type, const void* data, std::size_t size) {
    const std::size_t at = out.size();
    out.resize(at + RTA_SPACE(size), 0);
    rtattr rta{static_cast<unsigned short>(RTA_LENGTH(size)), attr_type};
    std::memcpy(out.data() + at, &rta, sizeof(rta));
    std::memcpy(out.data() + at + RTA_LENGTH(0), data, size);
  };
  auto addr = core::IpAddr::parse(ip);
  put(NDA_DST, addr->raw.data() + (v6 ? 0 : 12), v6 ? 16 : 4);
  if (!lladdr.empty()) put(NDA_LLADDR, lladdr.data(), lladdr.size());
  nlmsghdr nl{};
  nl.nlmsg_len = static_cast<std::uint32_t>(out.size());
  nl.nlmsg_type = type;
  std::memcpy(out.data(), &nl, sizeof(nl));
  return out;
}

std::vector<std::uint8_t> ipoib_lladdr() { return {kHw.raw.begin(), kHw.raw.end()}; }

TEST(NeighbourMessage, IpoibEntriesDecodeToTheirQpnAndGid) {
  auto m = decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.7", ipoib_lladdr()));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, NeighbourMessage::Kind::update);
  EXPECT_EQ(m->ip, *core::IpAddr::parse("10.0.0.7"));
  ASSERT_TRUE(m->ipoib_hw);
  EXPECT_EQ(m->ipoib_hw->qpn(), 0x48u);
  EXPECT_EQ(m->ipoib_hw->gid(), *core::Gid::parse("fe80::2:c903:0:1"));
  EXPECT_EQ(m->ifindex, 3);

  auto v6 = decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_STALE, "fd00::7", ipoib_lladdr()));
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->ip, *core::IpAddr::parse("fd00::7"));
  EXPECT_EQ(v6->kind, NeighbourMessage::Kind::update);
}

TEST(NeighbourMessage, StatesDecideUpdateRemoveOrIgnore) {
  for (int state : {NUD_REACHABLE, NUD_STALE, NUD_DELAY, NUD_PROBE, NUD_PERMANENT}) {
    EXPECT_EQ(decode_neighbour(neighbour(RTM_NEWNEIGH, static_cast<std::uint16_t>(state), "10.0.0.1", ipoib_lladdr()))->kind,
              NeighbourMessage::Kind::update) << state;
  }
  EXPECT_EQ(decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_FAILED, "10.0.0.1", {}))->kind, NeighbourMessage::Kind::remove);
  EXPECT_EQ(decode_neighbour(neighbour(RTM_DELNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr()))->kind,
            NeighbourMessage::Kind::remove);
  EXPECT_EQ(decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_INCOMPLETE, "10.0.0.1", {}))->kind,
            NeighbourMessage::Kind::ignore);
  auto ethernet = decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", {2, 0, 0, 0, 0, 1}));
  ASSERT_TRUE(ethernet);
  EXPECT_FALSE(ethernet->ipoib_hw);
}

TEST(NeighbourMessage, MalformedMessagesAreRefused) {
  auto good = neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr());
  auto too_long = good;
  too_long[0] = static_cast<std::uint8_t>(good.size() + 4);
  EXPECT_FALSE(decode_neighbour(too_long));
  EXPECT_FALSE(decode_neighbour(std::span(good.data(), 20)));
  auto bad_dst = neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "fd00::1", ipoib_lladdr());
  bad_dst[NLMSG_HDRLEN] = AF_INET;  // a 16-byte destination in an IPv4 message
  EXPECT_FALSE(decode_neighbour(bad_dst));
  auto overrun = good;
  overrun[NLMSG_LENGTH(sizeof(ndmsg))] = 200;  // NDA_DST's length runs past the message
  EXPECT_FALSE(decode_neighbour(overrun));
  auto link = good;
  link[4] = RTM_NEWLINK;
  EXPECT_FALSE(decode_neighbour(link));
}

std::string on(const std::optional<IpoibPort>& port) {
  return port ? "@" + port->device + ":" + std::to_string(port->number) : "";
}

struct Recorded {
  std::vector<std::string> events;
  NeighbourMirror::Sink sink() {
    return {[this](const core::IpAddr& ip, const core::HwAddr&, const std::optional<IpoibPort>& port) {
              events.push_back("+" + ip.to_string() + on(port));
            },
            [this](const core::IpAddr& ip, const std::optional<IpoibPort>& port) {
              events.push_back("-" + ip.to_string() + on(port));
            }};
  }
};

const NeighbourLink kIpoib{true, std::nullopt};
const NeighbourLink kEthernet{};

TEST(NeighbourMirror, IpoibEntriesFeedTheSinkOthersAreCounted) {
  Recorded r;
  NeighbourMirror mirror(r.sink());
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr())), kIpoib);
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_STALE, "10.0.0.1", ipoib_lladdr())), kIpoib);
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.2", {2, 0, 0, 0, 0, 1})), kEthernet);
  mirror.apply(*decode_neighbour(neighbour(RTM_DELNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr())), kIpoib);
  EXPECT_EQ(r.events, (std::vector<std::string>{"+10.0.0.1", "-10.0.0.1"})) << "STALE of the same address is no news";
  EXPECT_EQ(mirror.stats().other, 1u);
  EXPECT_EQ(mirror.stats().ignored_non_ipoib, 1u);
}

TEST(NeighbourMirror, ADumpRemovesWhatItDidNotSee) {
  Recorded r;
  NeighbourMirror mirror(r.sink());
  for (const char* ip : {"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
    mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, ip, ipoib_lladdr())), kIpoib);
  }
  r.events.clear();
  mirror.begin_dump();
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.2", ipoib_lladdr())), kIpoib);
  mirror.end_dump();
  EXPECT_EQ(r.events, (std::vector<std::string>{"-10.0.0.1", "-10.0.0.3"}));
  EXPECT_EQ(mirror.stats().ipoib, 1u);
  EXPECT_EQ(mirror.stats().dumps, 1u);
}

TEST(NeighbourMirror, AnEntryGoesToItsInterfacesPortAndMovesWhenTheInterfaceDoes) {
  Recorded r;
  NeighbourMirror mirror(r.sink());
  const NeighbourLink ib0{true, IpoibPort{"mlx5_0", 1}};
  const NeighbourLink ib1{true, IpoibPort{"mlx5_1", 1}};
  // The same address on two rails (ib0 ifindex 3, ib1 ifindex 4): one entry per port.
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr(), 3)), ib0);
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr(), 4)), ib1);
  mirror.apply(*decode_neighbour(neighbour(RTM_DELNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr(), 3)), ib0);
  // ifindex 4 now says it is on mlx5_2 (the interface was moved): out of mlx5_1, into mlx5_2.
  mirror.apply(*decode_neighbour(neighbour(RTM_NEWNEIGH, NUD_REACHABLE, "10.0.0.1", ipoib_lladdr(), 4)),
               NeighbourLink{true, IpoibPort{"mlx5_2", 1}});
  EXPECT_EQ(r.events, (std::vector<std::string>{"+10.0.0.1@mlx5_0:1", "+10.0.0.1@mlx5_1:1", "-10.0.0.1@mlx5_0:1",
                                                "-10.0.0.1@mlx5_1:1", "+10.0.0.1@mlx5_2:1"}));
  EXPECT_EQ(mirror.stats().ipoib, 1u);
}

// A sysfs tree as ib_ipoib leaves it: class/net/<if>/device/infiniband/<ca>/, class/net/<if>/dev_port.
class SysfsTree {
 public:
  SysfsTree() : root_(std::filesystem::temp_directory_path() / ("ibat-sysfs-" + std::to_string(::getpid()))) {}
  ~SysfsTree() { std::filesystem::remove_all(root_); }
  void interface(const std::string& name, const std::vector<std::string>& cas, const std::string& dev_port) {
    const auto net = root_ / "class/net" / name;
    std::filesystem::create_directories(net / "device/infiniband");
    for (const auto& ca : cas) std::filesystem::create_directories(net / "device/infiniband" / ca);
    if (!dev_port.empty()) std::ofstream(net / "dev_port") << dev_port;
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(IpoibPort, TheInterfacesCaAndDevPortPlusOneNameItsPort) {
  SysfsTree sys;
  sys.interface("ib0", {"mlx5_0"}, "0\n");
  sys.interface("ib1", {"mlx4_0"}, "1\n");      // the second port of a dual-port HCA
  sys.interface("ib0.8001", {"mlx5_0"}, "0\n");  // a P_Key child: its parent's port
  EXPECT_EQ(locate_ipoib_port(sys.root(), "ib0"), (IpoibPort{"mlx5_0", 1}));
  EXPECT_EQ(locate_ipoib_port(sys.root(), "ib1"), (IpoibPort{"mlx4_0", 2}));
  EXPECT_EQ(locate_ipoib_port(sys.root(), "ib0.8001"), (IpoibPort{"mlx5_0", 1}));
}

TEST(IpoibPort, WhatSysfsDoesNotTellIsNotGuessed) {
  SysfsTree sys;
  sys.interface("two", {"mlx5_0", "mlx5_1"}, "0\n");
  sys.interface("noport", {"mlx5_0"}, "");
  sys.interface("garbage", {"mlx5_0"}, "one\n");
  sys.interface("negative", {"mlx5_0"}, "-1\n");
  sys.interface("nocas", {}, "0\n");
  for (const char* name : {"two", "noport", "garbage", "negative", "nocas", "absent", "", "..", "a/b"})
    EXPECT_FALSE(locate_ipoib_port(sys.root(), name)) << name;
}

// A network namespace of the test's own with a veth pair, removed at the end.
class Namespace {
 public:
  Namespace() : name_("ibat-neigh-" + std::to_string(::getpid())) {
    ok_ = run("ip netns add " + name_) && run("ip -n " + name_ + " link add v0 type veth peer name v1") &&
          run("ip -n " + name_ + " link set v0 up");
  }
  ~Namespace() { run("ip netns del " + name_ + " 2>/dev/null"); }
  bool ok() const { return ok_; }
  bool ip(const std::string& args) { return run("ip -n " + name_ + " " + args); }
  // Runs `f` with the calling thread inside the namespace (sockets it opens stay there).
  template <class F>
  void inside(F f) {
    const int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    const int there = ::open(("/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(home, 0);
    ASSERT_GE(there, 0);
    ASSERT_EQ(::setns(there, CLONE_NEWNET), 0);
    f();
    ASSERT_EQ(::setns(home, CLONE_NEWNET), 0);
    ::close(home);
    ::close(there);
  }
  std::size_t kernel_count() {
    std::FILE* p = ::popen(("ip -n " + name_ + " neigh show dev v0").c_str(), "r");
    std::size_t lines = 0;
    for (int c; (c = std::fgetc(p)) != EOF;) lines += c == '\n';
    ::pclose(p);
    return lines;
  }
  const std::string& name() const { return name_; }

 private:
  static bool run(const std::string& command) { return std::system(command.c_str()) == 0; }
  std::string name_;
  bool ok_ = false;
};

// Runs the loop until `done()` holds (each handler run is an event), at most 20 s.
template <class P>
bool run_until(asio::io_context& loop, P done) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    loop.restart();
    loop.run_one_for(100ms);
  }
  return true;
}

TEST(NeighbourMonitor, FollowsTheRealKernelTableAndIgnoresNonIpoibLinks) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  Namespace ns;
  ASSERT_TRUE(ns.ok()) << "cannot create a network namespace with a veth pair";
  ASSERT_TRUE(ns.ip("neigh add 10.9.0.1 lladdr 02:00:00:00:00:01 dev v0"));
  asio::io_context loop;
  Recorded r;
  NeighbourMonitor monitor(loop, r.sink());
  ns.inside([&] { ASSERT_TRUE(monitor.start()); });
  ASSERT_TRUE(run_until(loop, [&] { return monitor.stats().table.dumps == 1; }));
  EXPECT_EQ(monitor.stats().table.other, 1u) << "the dump found the entry added before start";

  ASSERT_TRUE(ns.ip("neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev v0"));
  ASSERT_TRUE(run_until(loop, [&] { return monitor.stats().table.other == 2; }));
  const auto ignored = monitor.stats().table.ignored_non_ipoib;
  ASSERT_TRUE(ns.ip("neigh change 10.9.0.2 lladdr 02:00:00:00:00:03 dev v0"));
  ASSERT_TRUE(run_until(loop, [&] { return monitor.stats().table.ignored_non_ipoib > ignored; }));
  ASSERT_TRUE(ns.ip("neigh del 10.9.0.1 dev v0"));
  ASSERT_TRUE(run_until(loop, [&] { return monitor.stats().table.other == 1; }));
  EXPECT_TRUE(r.events.empty()) << "veth is not IPoIB: nothing reaches the endpoint table";
  EXPECT_EQ(monitor.stats().table.ipoib, 0u);
}

TEST(NeighbourMonitor, ABurstThatOverrunsTheSocketEndsInAReDumpAndTheExactTable) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  Namespace ns;
  ASSERT_TRUE(ns.ok());
  asio::io_context loop;
  Recorded r;
  NeighbourMonitor monitor(loop, r.sink(), 4096);  // the kernel's smallest buffers: it must overrun
  ns.inside([&] { ASSERT_TRUE(monitor.start()); });
  ASSERT_TRUE(run_until(loop, [&] { return monitor.stats().table.dumps == 1; }));

  // 10,000 changes while the loop does not read: 500 addresses replaced 20 times, then 100 deleted.
  const std::string batch = "/tmp/" + ns.name() + ".batch";
  {
    std::ofstream out(batch);
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 500; ++i) {
        out << "neigh replace 10.8." << i / 250 << "." << i % 250 + 1 << " lladdr 02:00:00:00:"
            << std::hex << round << ":" << i % 256 << std::dec << " dev v0\n";
      }
    }
    for (int i = 0; i < 100; ++i) out << "neigh del 10.8.0." << i + 1 << " dev v0\n";
  }
  ASSERT_TRUE(ns.ip("-batch " + batch));
  std::remove(batch.c_str());
  const std::size_t want = ns.kernel_count();
  ASSERT_EQ(want, 400u);
  ASSERT_TRUE(run_until(loop, [&] {
    auto s = monitor.stats();
    return s.overruns > 0 && s.table.dumps >= 2 && s.table.other == want;
  })) << "overruns " << monitor.stats().overruns << ", dumps " << monitor.stats().table.dumps << ", known "
      << monitor.stats().table.other << ", kernel " << want;
}

}  // namespace
}  // namespace ibat::kernel
