// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Session: socket I/O and reply dispatch of a libibat handle (see session.h).
#include "client/session.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "client/include/ibat.h"

namespace ibat::client {

Session::~Session() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<Session> Session::connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    errno = path.empty() ? EINVAL : ENAMETOOLONG;
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return nullptr;
  }
  return std::unique_ptr<Session>(new Session(fd));
}

bool Session::flush() {
  if (flushing_) return !broken_;  // a handler sent during an outer flush: that loop writes it
  flushing_ = true;
  while (!broken_ && out_sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      ++writes_;
      out_sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      disconnect(std::string("cannot send to ibatd: ") + std::strerror(errno));
      break;
    }
    // Socket full. Inside process() the splitter is busy, so only wait for room.
    pollfd pfd{fd_, static_cast<short>(reading_ ? POLLOUT : POLLIN | POLLOUT), 0};
    int r = ::poll(&pfd, 1, kStallMs);
    if (r == 0) {
      disconnect("ibatd has not read a request for " + std::to_string(kStallMs / 1000) + " s");
      break;
    }
    if (r > 0 && (pfd.revents & POLLIN) && !reading_) process();
  }
  flushing_ = false;
  if (out_sent_ == out_.size() || broken_) {
    out_.clear();
    out_sent_ = 0;
    held_ = 0;
  }
  return !broken_;
}

std::uint32_t Session::take_id() {
  std::uint32_t id = next_id_++;
  while (id == 0 || pending_.count(id)) id = next_id_++;
  return id;
}

int Session::send(const std::function<void(std::vector<std::uint8_t>&, std::uint32_t)>& encode,
                  FrameHandler handler, bool streaming, std::uint32_t* id_out) {
  if (broken_) return IBAT_EDISCONNECTED;
  if (handler && pending_.size() >= kMaxPending) return IBAT_EOVERLOADED;
  std::uint32_t id = take_id();
  encode(out_, id);
  if (handler) pending_.emplace(id, Pending{std::move(handler), streaming});
  if (id_out) *id_out = id;
  // From a reply handler: process() writes it with the others when it returns.
  if (!reading_ || ++held_ >= kBatchFrames) flush();
  return IBAT_OK;
}

void Session::forget(std::uint32_t id) { pending_.erase(id); }

void Session::dispatch(const protocol::FrameHeader& header, std::span<const std::uint8_t> payload) {
  if (header.op == protocol::reply_op(protocol::Op::error))
    last_message_.assign(payload.begin(), payload.end());
  auto it = pending_.find(header.id);
  if (it == pending_.end()) return;  // cancelled by forget(), or a CANCEL acknowledgement
  bool last = !it->second.streaming || !header.more() || header.status != protocol::Status::ok;
  if (!last) {
    FrameHandler& handler = it->second.handler;
    handler(header.id, static_cast<int>(header.status), &header, payload);
    return;
  }
  FrameHandler handler = std::move(it->second.handler);
  pending_.erase(it);
  handler(header.id, static_cast<int>(header.status), &header, payload);
}

int Session::process() {
  if (broken_) return IBAT_EDISCONNECTED;
  if (reading_) return IBAT_OK;  // called from a handler: the outer process() carries on
  reading_ = true;
  int rc = read_available();
  reading_ = false;
  if (out_sent_ < out_.size() && !flush()) return IBAT_EDISCONNECTED;  // what the handlers sent
  return rc;
}

int Session::read_available() {
  std::uint8_t buf[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return IBAT_OK;
      disconnect(std::string("cannot read from ibatd: ") + std::strerror(errno));
      return IBAT_EDISCONNECTED;
    }
    if (n == 0) {
      disconnect("ibatd closed the connection");
      return IBAT_EDISCONNECTED;
    }
    auto error = splitter_.feed(std::span<const std::uint8_t>(buf, static_cast<std::size_t>(n)),
                                [this](const protocol::FrameHeader& h, std::span<const std::uint8_t> p) {
                                  dispatch(h, p);
                                });
    if (error) {
      disconnect("ibatd sent a frame this library cannot parse: " + error->message);
      return IBAT_EDISCONNECTED;
    }
    if (broken_) return IBAT_EDISCONNECTED;
  }
}

int Session::wait(const std::function<bool()>& done, int timeout_ms) {
  if (reading_) return IBAT_EARG;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  // A cached answer comes back within microseconds: read for it before sleeping in poll(), whose
  // wake-up on an idle CPU would cost more than the answer, unless the host has more runnable
  // tasks than CPUs (core::SpinPolicy; docs/performance.md).
  kernel::feed(spin_, start, sampler_);
  Clock::duration spin = spin_.may_spin() ? kSpinBeforeSleep : Clock::duration::zero();
  if (timeout_ms >= 0) spin = std::min<Clock::duration>(spin, std::chrono::milliseconds(timeout_ms));
  while (!done() && !broken_ && Clock::now() - start < spin)
    if (process() != IBAT_OK && !done()) return IBAT_EDISCONNECTED;
  while (!done()) {
    if (broken_) return IBAT_EDISCONNECTED;
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return IBAT_ETIMEOUT;
      wait_ms = static_cast<int>(left);
    }
    pollfd pfd{fd_, POLLIN, 0};
    ++sleeps_;
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno != EINTR) {
      disconnect(std::string("poll failed: ") + std::strerror(errno));
      return IBAT_EDISCONNECTED;
    }
    if (r > 0 && process() != IBAT_OK && !done()) return IBAT_EDISCONNECTED;
  }
  return IBAT_OK;
}

void Session::disconnect(std::string message) {
  if (broken_) return;
  broken_ = true;
  if (last_message_.empty()) last_message_ = std::move(message);
  fail_all(IBAT_EDISCONNECTED);
}

void Session::fail_all(int status) {
  auto failed = std::move(pending_);
  pending_.clear();
  for (auto& [id, pending] : failed) pending.handler(id, status, nullptr, {});
}

}  // namespace ibat::client
