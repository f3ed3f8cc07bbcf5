// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A stand-in for systemd's notification socket in tests: a datagram socket bound in a temp dir (or,
// with an '@' name, in the abstract namespace) whose datagrams the test reads, waiting for each.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace ibat::server::test_support {

class NotifySocket {
 public:
  // `name`: a path, or "@name" for the abstract namespace ($NOTIFY_SOCKET's two forms).
  explicit NotifySocket(std::string name) : name_(std::move(name)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name_.data(), name_.size());
    const bool abstract = name_.front() == '@';
    if (abstract) addr.sun_path[0] = '\0';
    auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size() + (abstract ? 0 : 1));
    EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), size), 0) << name_ << ": " << std::strerror(errno);
  }
  ~NotifySocket() {
    ::close(fd_);
    if (name_.front() != '@') std::filesystem::remove(name_);
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& name() const { return name_; }
  // The next datagram, waiting up to `timeout_ms` for it; none if none came.
  std::optional<std::string> next(int timeout_ms = 10000) {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) != 1) return std::nullopt;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace ibat::server::test_support
