// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A tiny in-test ibatd stand-in for libibat tests: listens on a Unix socket in a temp dir, accepts
// one connection and, on its own thread, hands every request frame to a test-supplied handler,
// which may answer at once (reply()) or keep the request for later.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "protocol/frame.h"

namespace ibat::test {

struct ReceivedFrame {
  protocol::FrameHeader header;
  std::vector<std::uint8_t> payload;
};

class FakeServer {
 public:
  // Runs on the server thread for each request frame, in arrival order.
  using Handler = std::function<void(FakeServer&, const ReceivedFrame&)>;

  explicit FakeServer(Handler handler = {});
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  const std::string& path() const { return path_; }
  // Sends bytes (one or more encoded frames) to the client. Any thread.
  void reply(const std::vector<std::uint8_t>& bytes);
  // Closes the client connection. Any thread.
  void close_connection();
  // Blocks until `count` request frames have arrived (at most 10 s); returns all received so far.
  std::vector<ReceivedFrame> wait_for_requests(std::size_t count);

 private:
  void run();

  Handler handler_;
  std::string dir_;
  std::string path_;
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<ReceivedFrame> received_;
  std::thread thread_;
};

}  // namespace ibat::test
