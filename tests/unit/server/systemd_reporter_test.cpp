// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SystemdReporter on an event loop with a fake $NOTIFY_SOCKET: WATCHDOG=1 at once and then every
// half $WATCHDOG_USEC while the loop runs, STATUS= once per change of the status line (not on each
// look at it), nothing armed when notification is off.
#include "server/daemon/systemd_reporter.h"

#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <asio/post.hpp>
#include <gtest/gtest.h>

#include "notify_socket.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using test_support::NotifySocket;

// The status line the reporter reads, set by the test; each read is counted and announced.
class StatusSource {
 public:
  std::string read() {
    std::lock_guard lock(mutex_);
    ++reads_;
    read_cv_.notify_all();
    return text_;
  }
  void set(std::string text) {
    std::lock_guard lock(mutex_);
    text_ = std::move(text);
  }
  // Waits until `more` further reads have happened; false after 10 s without them.
  bool wait_reads(int more) {
    std::unique_lock lock(mutex_);
    const int target = reads_ + more;
    return read_cv_.wait_for(lock, 10s, [&] { return reads_ >= target; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable read_cv_;
  std::string text_ = "a";
  int reads_ = 0;
};

TEST(SystemdReporter, PingsTheWatchdogAndSendsTheStatusOncePerChange) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibat-reporter-test-" + std::to_string(::getpid()))).string();
  NotifySocket systemd(path);
  SystemdNotifier notifier(systemd.name(), 40ms);  // pings every 20 ms
  StatusSource status;
  asio::io_context loop;
  SystemdReporter reporter(loop, notifier, [&] { return status.read(); }, 5ms);
  notifier.ready("a");
  ASSERT_EQ(systemd.next(), "READY=1\nSTATUS=a");
  reporter.start();
  std::thread runner([&] { loop.run(); });

  // The first ping at start, then one per interval.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(systemd.next(), "WATCHDOG=1") << "ping " << i;
  ASSERT_TRUE(status.wait_reads(3)) << "the status line is looked at every 5 ms";
  status.set("b");
  ASSERT_TRUE(status.wait_reads(3)) << "looked at again after the change";
  asio::post(loop, [&] { reporter.stop(); });
  runner.join();  // run() returns once the stopped timers leave it no work

  int status_datagrams = 0;
  while (std::optional<std::string> d = systemd.next(0)) {
    if (*d == "WATCHDOG=1") continue;
    EXPECT_EQ(*d, "STATUS=b");
    ++status_datagrams;
  }
  EXPECT_EQ(status_datagrams, 1) << "\"a\" was sent with READY, \"b\" once although read several times";
}

TEST(SystemdReporter, WithoutNotificationItArmsNothing) {
  SystemdNotifier notifier("");
  asio::io_context loop;
  int reads = 0;
  SystemdReporter reporter(loop, notifier, [&] { return std::to_string(++reads); }, 1ms);
  reporter.start();
  EXPECT_EQ(loop.run(), 0u) << "no timer armed";
  EXPECT_EQ(reads, 0);
}

}  // namespace
}  // namespace ibat::server
