// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SystemdNotifier against a fake $NOTIFY_SOCKET: the datagrams READY/STATUS/RELOADING/STOPPING/
// WATCHDOG as sd_notify(3) has them, to a path or an abstract ('@') name; STATUS only when it
// changed; the watchdog interval from $WATCHDOG_USEC and $WATCHDOG_PID; names it cannot use and a
// socket that is gone (logged once).
#include "server/daemon/systemd_notifier.h"

#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "notify_socket.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using test_support::NotifySocket;

class SystemdNotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ibat-notify-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SystemdNotifierTest, SendsEachMessageAsOneDatagram) {
  NotifySocket systemd((dir_ / "notify").string());
  SystemdNotifier notifier(systemd.name());
  ASSERT_TRUE(notifier.enabled());
  notifier.ready("1 of 1 port active, 0 paths cached");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=1 of 1 port active, 0 paths cached");
  notifier.status("1 of 1 port active, 0 paths cached");  // unchanged: not sent
  notifier.status("1 of 1 port active, 5 paths cached");
  EXPECT_EQ(systemd.next(), "STATUS=1 of 1 port active, 5 paths cached") << "the unchanged status was sent";
  notifier.reloading();
  std::optional<std::string> reloading = systemd.next();
  ASSERT_TRUE(reloading);
  const std::string prefix = "RELOADING=1\nMONOTONIC_USEC=";
  ASSERT_EQ(reloading->rfind(prefix, 0), 0u) << *reloading;
  const std::string usec = reloading->substr(prefix.size());
  EXPECT_TRUE(!usec.empty() && usec.front() != '0' &&
              std::all_of(usec.begin(), usec.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      << *reloading;
  notifier.ready("1 of 1 port active, 5 paths cached");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=1 of 1 port active, 5 paths cached");
  notifier.watchdog();
  EXPECT_EQ(systemd.next(), "WATCHDOG=1");
  notifier.stopping();
  EXPECT_EQ(systemd.next(), "STOPPING=1");
  EXPECT_EQ(systemd.next(0), std::nullopt) << "nothing else";
}

TEST_F(SystemdNotifierTest, ReachesAnAbstractSocketNamedWithAt) {
  NotifySocket systemd("@ibat-notify-test-" + std::to_string(::getpid()));
  SystemdNotifier notifier(systemd.name());
  notifier.ready("up");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=up");
}

TEST_F(SystemdNotifierTest, WithoutAUsableSocketItIsDisabled) {
  EXPECT_FALSE(SystemdNotifier("").enabled());
  EXPECT_FALSE(SystemdNotifier("relative/notify").enabled());
  EXPECT_FALSE(SystemdNotifier("/" + std::string(200, 'x')).enabled()) << "longer than sun_path";
  EXPECT_FALSE(SystemdNotifier("", 30s).watchdog_interval()) << "no socket, no pings";
}

TEST_F(SystemdNotifierTest, WatchdogIntervalIsHalfOfWatchdogUsec) {
  NotifySocket systemd((dir_ / "notify").string());
  EXPECT_EQ(SystemdNotifier(systemd.name(), 30s).watchdog_interval(), std::chrono::microseconds(15s));
  EXPECT_EQ(SystemdNotifier(systemd.name()).watchdog_interval(), std::nullopt);
}

// The environment's three variables, restored after the test.
class SystemdEnvironmentTest : public SystemdNotifierTest {
 protected:
  void TearDown() override {
    for (const char* name : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) ::unsetenv(name);
    SystemdNotifierTest::TearDown();
  }
  std::optional<std::chrono::microseconds> interval(const char* usec, const std::string& pid) {
    ::setenv("WATCHDOG_USEC", usec, 1);
    if (pid.empty()) ::unsetenv("WATCHDOG_PID"); else ::setenv("WATCHDOG_PID", pid.c_str(), 1);
    return SystemdNotifier::from_environment().watchdog_interval();
  }
};

TEST_F(SystemdEnvironmentTest, TakesTheSocketAndAWatchdogMeantForThisProcess) {
  NotifySocket systemd((dir_ / "notify").string());
  ::setenv("NOTIFY_SOCKET", systemd.name().c_str(), 1);
  SystemdNotifier notifier = SystemdNotifier::from_environment();
  notifier.ready("from the environment");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=from the environment");
  const std::string self = std::to_string(::getpid());
  EXPECT_EQ(interval("20000000", self), std::chrono::microseconds(10s));
  EXPECT_EQ(interval("20000000", ""), std::chrono::microseconds(10s)) << "no WATCHDOG_PID: ours";
  EXPECT_EQ(interval("20000000", std::to_string(::getpid() + 1)), std::nullopt) << "another process's watchdog";
  EXPECT_EQ(interval("abc", self), std::nullopt);
  EXPECT_EQ(interval("0", self), std::nullopt);
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(SystemdNotifier::from_environment().enabled());
}

TEST_F(SystemdNotifierTest, ASocketThatIsGoneIsLoggedOnce) {
  auto previous = spdlog::default_logger();
  std::ostringstream log;
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  {
    const std::string gone = (dir_ / "gone").string();
    SystemdNotifier notifier(gone);
    notifier.watchdog();
    notifier.watchdog();
    const std::string text = log.str();
    EXPECT_NE(text.find("cannot notify systemd through NOTIFY_SOCKET=" + gone + ": No such file or directory"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("cannot notify", text.find("cannot notify") + 1), std::string::npos) << "logged twice: " << text;
  }
  spdlog::set_default_logger(previous);
}

}  // namespace
}  // namespace ibat::server
