// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// FakeServer: see fake_server.h.
#include "fake_server.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "protocol/frame_splitter.h"

namespace ibat::test {

FakeServer::FakeServer(Handler handler) : handler_(std::move(handler)) {
  char tmpl[] = "/tmp/ibat-client-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  path_ = dir_ + "/ibatd.sock";
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 1) != 0)
    throw std::runtime_error("cannot listen on " + path_);
  thread_ = std::thread([this] { run(); });
}

FakeServer::~FakeServer() {
  ::shutdown(listen_fd_, SHUT_RDWR);
  close_connection();
  thread_.join();
  ::close(listen_fd_);
  {
    std::lock_guard lock(mutex_);
    if (conn_fd_ >= 0) ::close(conn_fd_);
  }
  ::unlink(path_.c_str());
  ::rmdir(dir_.c_str());
}

void FakeServer::run() {
  int fd = ::accept(listen_fd_, nullptr, nullptr);
  if (fd < 0) return;
  {
    std::lock_guard lock(mutex_);
    conn_fd_ = fd;
  }
  protocol::FrameSplitter splitter;
  std::uint8_t buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    auto error = splitter.feed(std::span<const std::uint8_t>(buf, static_cast<std::size_t>(n)),
                               [&](const protocol::FrameHeader& h, std::span<const std::uint8_t> p) {
                                 ReceivedFrame frame{h, {p.begin(), p.end()}};
                                 if (handler_) handler_(*this, frame);
                                 std::lock_guard lock(mutex_);
                                 received_.push_back(std::move(frame));
                                 arrived_.notify_all();
                               });
    if (error) return;
  }
}

void FakeServer::reply(const std::vector<std::uint8_t>& bytes) {
  std::lock_guard lock(mutex_);
  std::size_t done = 0;
  while (conn_fd_ >= 0 && done < bytes.size()) {
    ssize_t n = ::send(conn_fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void FakeServer::close_connection() {
  std::lock_guard lock(mutex_);
  if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);
}

std::vector<ReceivedFrame> FakeServer::wait_for_requests(std::size_t count) {
  std::unique_lock lock(mutex_);
  arrived_.wait_for(lock, std::chrono::seconds(10), [&] { return received_.size() >= count; });
  return received_;
}

}  // namespace ibat::test
