// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// BusyPoll (server/daemon/busy_poll.h): its rules with the clock given, and ibatd's loop with real
// sockets: a client that asks again at once makes the loop poll, one request per connection or a
// zero window never does, and a reload changes the window.
#include "server/daemon/busy_poll.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "daemon_fixture.h"
#include "server_test_support.h"
#include "test_client.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using test_support::Client;
using test_support::gid;
using Clock = BusyPoll::Clock;

// Stand-ins for the host's run queue (two CPUs).
std::optional<kernel::RunQueueSample> idle() { return kernel::RunQueueSample{2, 2}; }
std::optional<kernel::RunQueueSample> crowded() { return kernel::RunQueueSample{5, 2}; }

TEST(BusyPollRules, ARequestWithinTheWindowOfTheLastReplyAsksAgainAtOnce) {
  asio::io_context loop;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  busy.set_window(50us);
  EXPECT_TRUE(busy.asks_again_at_once(0us));
  EXPECT_TRUE(busy.asks_again_at_once(50us));
  EXPECT_FALSE(busy.asks_again_at_once(50us + 1ns));
  busy.set_window(0us);
  EXPECT_FALSE(busy.asks_again_at_once(0us));  // off
}

TEST(BusyPollRules, AnArmedWindowPollsUntilItsEnd) {
  asio::io_context loop;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  busy.set_run_queue_sampler(idle);
  const Clock::time_point t0 = Clock::time_point{} + 1s;
  EXPECT_FALSE(busy.polling(t0));
  busy.arm(t0);  // window 0: off, arming does nothing
  EXPECT_FALSE(busy.polling(t0));
  busy.set_window(50us);
  busy.arm(t0);
  EXPECT_TRUE(busy.polling(t0));
  EXPECT_TRUE(busy.polling(t0 + 50us - 1ns));
  EXPECT_FALSE(busy.polling(t0 + 50us));
  busy.arm(t0 + 40us);  // a later reply moves the end
  EXPECT_TRUE(busy.polling(t0 + 89us));
  EXPECT_FALSE(busy.polling(t0 + 90us));
}

TEST(BusyPollRules, ACrowdedHostIsNotPolledFor) {
  asio::io_context loop;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  busy.set_run_queue_sampler(crowded);
  busy.set_window(50us);
  const Clock::time_point t0 = Clock::time_point{} + 1s;
  busy.arm(t0);  // one crowded sample: still polls
  EXPECT_TRUE(busy.polling(t0));
  const Clock::time_point t1 = t0 + core::SpinPolicy::kSampleEvery;
  busy.arm(t1);  // the second in a row: sleeps
  EXPECT_FALSE(busy.polling(t1));
  EXPECT_EQ(busy.crowded_stops(), 1u);
  busy.set_run_queue_sampler(idle);
  const Clock::time_point t2 = t1 + core::SpinPolicy::kSampleEvery;
  busy.arm(t2);
  EXPECT_TRUE(busy.polling(t2));
}

TEST(BusyPollRules, SpellsAreCountedWhenTheyBeginAndTheirIdleTimeWhenTheyEnd) {
  asio::io_context loop;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  busy.begin_spell();
  EXPECT_EQ(busy.counters().spells, 1u);
  busy.end_spell(30us, true);
  busy.begin_spell();
  busy.end_spell(50us, false);
  busy.begin_spell();
  busy.end_spell(1500ns, true);
  EXPECT_EQ(busy.counters().spells, 3u);
  EXPECT_EQ(busy.counters().caught, 2u);
  EXPECT_EQ(busy.counters().polled, 81500ns);
}

class BusyPollDaemonTest : public test_support::DaemonTest {
 protected:
  // Starts ibatd with `window_us` on a host whose run queue `sampler` reports, and caches
  // kDestination through the fake SA.
  void start_with_window(std::uint32_t window_us, kernel::RunQueueSampler sampler = idle) {
    asio::use_service<BusyPoll>(loop_).set_run_queue_sampler(sampler);
    config_.server.busy_poll_us = window_us;
    start();
    Client c(config_.server.socket);
    warm(c, 1, kDestination, 7);
  }
  // `count` cached resolves on one connection, each sent when the previous one's reply is read.
  void one_at_a_time(int count) {
    Client c(config_.server.socket);
    ASSERT_TRUE(c.connected());
    for (int i = 0; i < count; ++i) {
      const auto id = static_cast<std::uint32_t>(i + 1);
      c.resolve(id, kDestination);
      ASSERT_EQ(c.status_of(id), protocol::Status::ok) << "request " << id;
    }
  }
  nlohmann::json busy_poll_stats() {
    return nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["busy_poll"];
  }

  const core::Gid kDestination = gid(0x42);
};

// 1000 us, the largest window, so that a test client slowed by a loaded machine still asks again
// within it.
TEST_F(BusyPollDaemonTest, AClientThatAsksAgainAtOnceMakesTheLoopPollInsteadOfSleeping) {
  start_with_window(1000);
  one_at_a_time(200);
  nlohmann::json s = busy_poll_stats();
  EXPECT_EQ(s["window_us"], 1000);
  EXPECT_GE(s["spells"].get<std::uint64_t>(), 1u);
  EXPECT_GE(s["caught"].get<std::uint64_t>(), 1u);
  EXPECT_GT(s["polled_s"].get<double>(), 0.0);
}

TEST_F(BusyPollDaemonTest, ClientsThatAskOnceEachNeverMakeItPoll) {
  start_with_window(1000);
  for (int i = 0; i < 50; ++i) one_at_a_time(1);  // like `ibat resolve` run 50 times
  nlohmann::json s = busy_poll_stats();
  EXPECT_EQ(s["spells"], 0);
  EXPECT_EQ(s["polled_s"], 0.0);
}

TEST_F(BusyPollDaemonTest, AZeroWindowNeverPolls) {
  start_with_window(0);
  one_at_a_time(200);
  nlohmann::json s = busy_poll_stats();
  EXPECT_EQ(s["window_us"], 0);
  EXPECT_EQ(s["spells"], 0);
}

TEST_F(BusyPollDaemonTest, ACrowdedHostIsNotPolledFor) {
  start_with_window(1000, crowded);
  one_at_a_time(50);
  // Sampled at most every 10 ms: once 20 ms have passed the host has been seen crowded twice.
  const auto later = std::chrono::steady_clock::now() + 2 * core::SpinPolicy::kSampleEvery;
  while (std::chrono::steady_clock::now() < later) one_at_a_time(1);
  // Spells count when they begin: one that began before and is still running changes nothing.
  const std::uint64_t spells = busy_poll_stats()["spells"];
  one_at_a_time(200);
  nlohmann::json s = busy_poll_stats();
  EXPECT_EQ(s["crowded_stops"], 1);
  EXPECT_EQ(s["spells"], spells);  // none since
}

TEST_F(BusyPollDaemonTest, AReloadChangesTheWindow) {
  start_with_window(1000);
  DaemonConfig next = config_;
  next.server.busy_poll_us = 0;
  on_loop([&] { service_->reload(next); });
  one_at_a_time(200);
  nlohmann::json s = busy_poll_stats();
  EXPECT_EQ(s["window_us"], 0);
  EXPECT_EQ(s["spells"], 0);
}

}  // namespace
}  // namespace ibat::server
