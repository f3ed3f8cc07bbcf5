// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A blocking client of ibatd's sockets for the server tests (service_test.cpp, security_*_test.cpp,
// acm_endpoint_test.cpp): native-protocol requests and frames, raw bytes for the ACM socket.
#pragma once

#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol/frame_splitter.h"
#include "protocol/messages.h"
#include "server_test_support.h"

namespace ibat::server::test_support {

class Client {
 public:
  // Takes a connected fd.
  explicit Client(int fd) : fd_(fd) {}
  // Connects to `path`; connected() tells whether that worked.
  explicit Client(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) close();
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // False when the daemon is gone (closed or reset) before everything was sent.
  bool send(const std::vector<std::uint8_t>& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  void resolve(std::uint32_t id, const core::Gid& dgid, bool cache_only = false) {
    core::ResolveRequest r;
    r.target = dgid;
    r.cache_only = cache_only;
    std::vector<std::uint8_t> out;
    protocol::append_resolve_request(out, id, r);
    ASSERT_TRUE(send(out));
  }
  void request(protocol::Op op, std::uint32_t id) {
    std::vector<std::uint8_t> out;
    protocol::append_empty_request(out, id, op);
    ASSERT_TRUE(send(out));
  }
  // The next frame; nullopt on EOF, reset or timeout.
  std::optional<Frame> next(std::chrono::milliseconds timeout = 5s) {
    while (frames_.empty()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
      std::array<std::uint8_t, 65536> buf{};
      ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
      if (n <= 0) {
        eof_ = true;
        return std::nullopt;
      }
      auto error = splitter_.feed(std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(n)),
                                  [&](const protocol::FrameHeader& h, std::span<const std::uint8_t> payload) {
                                    frames_.push_back(Frame{h, {payload.begin(), payload.end()}});
                                  });
      EXPECT_FALSE(error) << "daemon sent a bad frame";
    }
    Frame f = frames_.front();
    frames_.erase(frames_.begin());
    return f;
  }
  // The status of the next frame, which must answer `id`.
  std::optional<protocol::Status> status_of(std::uint32_t id) {
    auto f = next();
    if (!f) return std::nullopt;
    EXPECT_EQ(f->header.id, id);
    return f->header.status;
  }
  // The whole body of a (possibly chunked) reply to `id`, which must be the next frames; empty
  // (and a failure) when it does not come complete.
  std::string body(std::uint32_t id) {
    std::string out;
    while (auto f = next()) {
      EXPECT_EQ(f->header.id, id);
      out += f->text();
      if (!f->header.more()) return out;
    }
    ADD_FAILURE() << "no complete reply to " << id;
    return {};
  }
  // Exactly `n` raw bytes (for protocols other than the native one); fewer on EOF or timeout.
  std::vector<std::uint8_t> read_bytes(std::size_t n, std::chrono::milliseconds timeout = 5s) {
    std::vector<std::uint8_t> out(n);
    std::size_t have = 0;
    while (have < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) break;
      ssize_t got = ::recv(fd_, out.data() + have, n - have, 0);
      if (got <= 0) break;
      have += static_cast<std::size_t>(got);
    }
    out.resize(have);
    return out;
  }
  // True once the daemon has closed the connection (frames still queued are skipped).
  bool closed_by_peer() {
    while (next()) {
    }
    return eof_;
  }

 private:
  int fd_ = -1;
  bool eof_ = false;
  protocol::FrameSplitter splitter_;
  std::vector<Frame> frames_;
};

}  // namespace ibat::server::test_support
