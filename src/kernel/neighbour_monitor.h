// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NeighbourMonitor: keeps ibatd's endpoint table in step with the kernel's neighbour table, the
// host's real ARP cache (docs/linux.md). It subscribes to rtnetlink neighbour events, dumps the
// table at start, and answers a socket overrun (ENOBUFS) with a full re-dump so nothing is lost.
// IPoIB neighbours (ARPHRD_INFINIBAND links, 20-byte addresses) become Resolver neighbour updates
// for the HCA port of their interface; others are ignored and counted. The socket is opened in the
// caller's network namespace.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include "kernel/neighbour_mirror.h"

struct mnl_socket;

namespace ibat::kernel {

struct NeighbourMonitorStats {
  bool running = false;
  NeighbourMirrorStats table;
  std::uint64_t overruns = 0;  // ENOBUFS: events lost, a re-dump followed
  std::uint64_t malformed = 0;
};

class NeighbourMonitor {
 public:
  // receive_buffer: SO_RCVBUF in bytes (0: the kernel's default); sysfs_root: where an IPoIB
  // interface's HCA port is read (ipoib_port.h).
  NeighbourMonitor(asio::io_context& loop, NeighbourMirror::Sink sink, int receive_buffer = 1 << 20,
                   std::string sysfs_root = "/sys");
  ~NeighbourMonitor();
  NeighbourMonitor(const NeighbourMonitor&) = delete;
  NeighbourMonitor& operator=(const NeighbourMonitor&) = delete;

  // Opens the rtnetlink socket and requests the first dump; false (logged) when it cannot.
  bool start();
  void stop();
  NeighbourMonitorStats stats() const;

 private:
  void request_dump();
  void wait_readable();
  void drain();
  void on_message(std::span<const std::uint8_t> message);
  NeighbourLink link_of(int ifindex) const;

  NeighbourMirror mirror_;
  int receive_buffer_;
  std::string sysfs_root_;
  mnl_socket* socket_ = nullptr;
  int link_fd_ = -1;  // an AF_INET datagram socket in the same namespace, for interface ioctls
  asio::posix::stream_descriptor readable_;
  std::uint32_t next_seq_ = 1;
  std::uint32_t dump_seq_ = 0;      // the dump in progress (0: none)
  bool dump_spoiled_ = false;       // an overrun hit the dump in progress: do it again
  bool redump_pending_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::array<std::uint8_t, 65536> buffer_{};
  NeighbourMonitorStats counters_;
};

}  // namespace ibat::kernel
