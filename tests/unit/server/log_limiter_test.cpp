// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The per-kind log rate limit: a burst per window is logged, the rest counted and summarised in one
// line when the window closes or at flush().
#include "server/daemon/log_limiter.h"

#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace ibat::server {
namespace {

using namespace std::chrono_literals;

class LogLimiterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)));
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }
  std::chrono::steady_clock::time_point now_{};
  LogLimiter limiter_{3, 60s, [this] { return now_; }};
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(LogLimiterTest, FirstBurstIsLoggedTheRestCountedAndSummarisedWhenTheWindowEnds) {
  int allowed = 0;
  for (int i = 0; i < 1000; ++i) allowed += limiter_.allow("denied");
  EXPECT_EQ(allowed, 3);
  EXPECT_TRUE(log_.str().empty());
  now_ += 61s;
  EXPECT_TRUE(limiter_.allow("denied")) << "a new window logs again";
  EXPECT_NE(log_.str().find("997 more 'denied' lines in the last 61 s"), std::string::npos) << log_.str();
}

TEST_F(LogLimiterTest, KindsAreLimitedApartAndFlushSummarisesWhatIsLeft) {
  for (int i = 0; i < 5; ++i) limiter_.allow("a");
  EXPECT_TRUE(limiter_.allow("b")) << "another kind has its own burst";
  limiter_.flush();
  EXPECT_NE(log_.str().find("2 more 'a' lines"), std::string::npos) << log_.str();
  EXPECT_EQ(log_.str().find("'b'"), std::string::npos) << "nothing of b was left out";
  limiter_.flush();
  EXPECT_EQ(log_.str().find("2 more 'a' lines", log_.str().find("2 more 'a' lines") + 1), std::string::npos)
      << "a summary is said once";
}

}  // namespace
}  // namespace ibat::server
