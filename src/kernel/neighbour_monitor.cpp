// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The rtnetlink neighbour socket (neighbour_monitor.h).
#include "kernel/neighbour_monitor.h"

#include <cerrno>
#include <cstring>

#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "kernel/neighbour_message.h"

namespace ibat::kernel {

NeighbourMonitor::NeighbourMonitor(asio::io_context& loop, NeighbourMirror::Sink sink, int receive_buffer,
                                   std::string sysfs_root)
    : mirror_(std::move(sink)), receive_buffer_(receive_buffer), sysfs_root_(std::move(sysfs_root)), readable_(loop) {}

NeighbourMonitor::~NeighbourMonitor() {
  *alive_ = false;
  stop();
}

bool NeighbourMonitor::start() {
  socket_ = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
  link_fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (socket_ == nullptr || link_fd_ < 0 || mnl_socket_bind(socket_, RTMGRP_NEIGH, MNL_SOCKET_AUTOPID) < 0) {
    spdlog::warn("kernel neighbour table not followed: rtnetlink socket: {} (set [linux] neighbours = false "
                 "to silence this)", std::strerror(errno));
    stop();
    return false;
  }
  if (receive_buffer_ > 0) {
    ::setsockopt(mnl_socket_get_fd(socket_), SOL_SOCKET, SO_RCVBUF, &receive_buffer_, sizeof(receive_buffer_));
  }
  readable_.assign(::dup(mnl_socket_get_fd(socket_)));
  counters_.running = true;
  request_dump();
  wait_readable();
  spdlog::info("following the kernel's neighbour table (rtnetlink): IPoIB entries feed the endpoint table");
  return true;
}

void NeighbourMonitor::stop() {
  asio::error_code ec;
  if (readable_.is_open()) readable_.close(ec);
  if (socket_ != nullptr) mnl_socket_close(socket_);
  socket_ = nullptr;
  if (link_fd_ >= 0) ::close(link_fd_);
  link_fd_ = -1;
  counters_.running = false;
}

void NeighbourMonitor::request_dump() {
  std::array<std::uint8_t, 64> request{};
  nlmsghdr* nlh = mnl_nlmsg_put_header(request.data());
  nlh->nlmsg_type = RTM_GETNEIGH;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = dump_seq_ = next_seq_++;
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = AF_UNSPEC;
  dump_spoiled_ = false;
  redump_pending_ = false;
  mirror_.begin_dump();
  if (mnl_socket_sendto(socket_, nlh, nlh->nlmsg_len) < 0) {
    spdlog::warn("kernel neighbour dump request failed: {}; retrying", std::strerror(errno));
    dump_seq_ = 0;
    redump_pending_ = true;
  }
}

void NeighbourMonitor::wait_readable() {
  readable_.async_wait(asio::posix::stream_descriptor::wait_read, [this, alive = alive_](asio::error_code ec) {
    if (!*alive || ec || socket_ == nullptr) return;
    drain();
    if (redump_pending_ && dump_seq_ == 0) request_dump();
    wait_readable();
  });
}

void NeighbourMonitor::drain() {
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(socket_, buffer_.data(), buffer_.size());
    if (n < 0) {
      if (errno == ENOBUFS) {
        // Events were dropped: only a full dump tells what the table is now.
        ++counters_.overruns;
        if (dump_seq_ != 0) dump_spoiled_ = true; else redump_pending_ = true;
        continue;
      }
      return;  // EAGAIN: all read
    }
    int remaining = static_cast<int>(n);
    for (auto* nlh = reinterpret_cast<const nlmsghdr*>(buffer_.data()); mnl_nlmsg_ok(nlh, remaining);
         nlh = mnl_nlmsg_next(nlh, &remaining)) {
      on_message(std::span(reinterpret_cast<const std::uint8_t*>(nlh), nlh->nlmsg_len));
    }
  }
}

void NeighbourMonitor::on_message(std::span<const std::uint8_t> message) {
  nlmsghdr header{};
  std::memcpy(&header, message.data(), sizeof(header));
  const bool of_dump = dump_seq_ != 0 && header.nlmsg_seq == dump_seq_;
  if (header.nlmsg_type == NLMSG_DONE && of_dump) {
    dump_seq_ = 0;
    if (dump_spoiled_) {
      redump_pending_ = true;  // some of it was lost: its absences prove nothing
    } else {
      mirror_.end_dump();
    }
    return;
  }
  if (header.nlmsg_type == NLMSG_ERROR && of_dump) {
    // EBUSY: the kernel still runs an earlier dump on this socket; ask again once it is read.
    dump_seq_ = 0;
    redump_pending_ = true;
    return;
  }
  if (header.nlmsg_type != RTM_NEWNEIGH && header.nlmsg_type != RTM_DELNEIGH) return;
  auto decoded = decode_neighbour(message);
  if (!decoded) {
    ++counters_.malformed;
    return;
  }
  mirror_.apply(*decoded, decoded->ipoib_hw ? link_of(decoded->ifindex) : NeighbourLink{});
}

NeighbourLink NeighbourMonitor::link_of(int ifindex) const {
  ifreq request{};
  request.ifr_ifindex = ifindex;
  if (::ioctl(link_fd_, SIOCGIFNAME, &request) != 0) return {};
  const std::string name(request.ifr_name, ::strnlen(request.ifr_name, sizeof(request.ifr_name)));
  if (::ioctl(link_fd_, SIOCGIFHWADDR, &request) != 0) return {};
  if (request.ifr_hwaddr.sa_family != ARPHRD_INFINIBAND) return {};
  return NeighbourLink{true, locate_ipoib_port(sysfs_root_, name)};
}

NeighbourMonitorStats NeighbourMonitor::stats() const {
  NeighbourMonitorStats out = counters_;
  out.table = mirror_.stats();
  return out;
}

}  // namespace ibat::kernel
