// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibsim's client protocol for one CA of the twin (see ibsim_link.h).
#include "ibsim_link.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace ibat::umad_twin {
namespace {

constexpr std::uint32_t kMagic = 0xdeadbeef;
enum : std::uint32_t { kCtlError, kCtlConnect, kCtlDisconnect, kCtlGetPort, kCtlGetVendor, kCtlGetGid,
                       kCtlGetGuid, kCtlGetNodeInfo, kCtlGetPortInfo, kCtlSetIssm, kCtlGetPkeys };

struct SimCtl {
  std::uint32_t magic;
  std::uint32_t clientid;
  std::uint32_t type;
  std::uint32_t len;
  std::uint8_t data[64];
};

struct SimClientInfo {
  std::uint32_t id;
  std::uint32_t qp;
  std::uint32_t issm;
  char nodeid[32];
};

constexpr auto kAttachPatience = std::chrono::seconds(10);  // ibsim starting up: connect is refused

// An abstract unix socket name as ibsim makes it: a NUL, the text, and its terminating NUL.
socklen_t abstract_name(sockaddr_un& addr, const std::string& text) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  const std::size_t n = std::min(text.size(), sizeof addr.sun_path - 3);
  std::memcpy(addr.sun_path + 1, text.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n + 1);
}

int bound_socket(const std::string& name) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr;
  const socklen_t len = abstract_name(addr, name);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) < 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error("bind " + name + ": " + std::strerror(e));
  }
  return fd;
}

void connect_to(int fd, const std::string& name) {
  sockaddr_un addr;
  const socklen_t len = abstract_name(addr, name);
  const auto deadline = std::chrono::steady_clock::now() + kAttachPatience;
  while (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) < 0) {
    if (errno != ECONNREFUSED || std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("cannot reach ibsim at '" + name + "': " + std::strerror(errno) +
                               " (is the fabric up? ibat-lab status)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

IbsimLink::IbsimLink(const std::string& sockname, const std::string& node, std::uint32_t client_id, bool issm)
    : where_("node '" + node + "' of simulator '" + sockname + "'") {
  try {
    control_fd_ = bound_socket(sockname + ":ctl" + std::to_string(client_id));
    timeval patience{5, 0};  // a control reply from a live ibsim takes microseconds
    ::setsockopt(control_fd_, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    connect_to(control_fd_, sockname + ":ctl");
    data_fd_ = bound_socket(sockname + ":in" + std::to_string(client_id));
    SimClientInfo info{};
    info.id = client_id;
    info.issm = issm ? 1 : 0;
    std::strncpy(info.nodeid, node.c_str(), sizeof info.nodeid - 1);
    control(kCtlConnect, &info, sizeof info);
    slot_ = info.id;
    connect_to(data_fd_, sockname + ":out" + std::to_string(slot_));
  } catch (...) {
    if (control_fd_ >= 0) ::close(control_fd_);
    if (data_fd_ >= 0) ::close(data_fd_);
    throw;
  }
}

IbsimLink::~IbsimLink() {
  try {
    control(kCtlDisconnect, nullptr, 0);
  } catch (const std::exception&) {
    // ibsim already gone: nothing to detach from
  }
  ::close(data_fd_);
  ::close(control_fd_);
}

void IbsimLink::control(std::uint32_t type, void* data, std::size_t length) {
  std::lock_guard lock(control_mutex_);
  SimCtl ctl{};
  ctl.magic = kMagic;
  ctl.clientid = slot_;
  ctl.type = type;
  ctl.len = static_cast<std::uint32_t>(length);
  if (length) std::memcpy(ctl.data, data, length);
  if (::send(control_fd_, &ctl, sizeof ctl, 0) != static_cast<ssize_t>(sizeof ctl)) {
    throw std::runtime_error("ibsim control request to " + where_ + " failed: " + std::strerror(errno));
  }
  ctl.type = kCtlError;
  if (::recv(control_fd_, &ctl, sizeof ctl, 0) != static_cast<ssize_t>(sizeof ctl)) {
    throw std::runtime_error("no control reply from ibsim for " + where_ + ": " + std::strerror(errno));
  }
  if (ctl.type == kCtlError) {
    throw std::runtime_error("ibsim refused " + where_ +
                             (type == kCtlConnect ? " (unknown node, an SM already there, or all 10 client slots "
                                                    "taken: see ibsim.log)"
                                                  : ""));
  }
  if (length) std::memcpy(data, ctl.data, length);
}

std::array<std::uint8_t, 64> IbsimLink::node_info() {
  std::array<std::uint8_t, 64> out{};
  control(kCtlGetNodeInfo, out.data(), out.size());
  return out;
}

std::array<std::uint8_t, 64> IbsimLink::port_info() {
  std::array<std::uint8_t, 64> out{};  // out[0] = 0: the attached port
  control(kCtlGetPortInfo, out.data(), out.size());
  return out;
}

std::array<std::uint8_t, 64> IbsimLink::pkeys() {
  std::array<std::uint8_t, 64> out{};
  control(kCtlGetPkeys, out.data(), out.size());
  return out;
}

void IbsimLink::set_issm(bool on) {
  int value = on ? 1 : 0;
  control(kCtlSetIssm, &value, sizeof value);
}

}  // namespace ibat::umad_twin
