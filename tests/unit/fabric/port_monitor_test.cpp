// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitor against a fake SM: it polls PortInfo (directed route, local) every interval and asks
// SMInfo (to the SM LID that PortInfo named, remote) only at start, on suspicion, on HCA events and
// at the routine interval; it reports the initial port, LID changes and SM restarts / fail-overs.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include "fabric/port_monitor.h"
#include "fake_sender.h"
#include "mad/port_info.h"
#include "mad/sm_info.h"
#include "mad/smp.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

// Answers every SMP from a mutable picture of the fabric.
class FakeSubnet final : public MadSender {
 public:
  explicit FakeSubnet(asio::io_context& loop) : loop_(loop) {}
  void attach(MadRequester& requester) { requester_ = &requester; }

  bool send(const OutgoingMad& out) override {
    auto request = mad::decode_smp(out.bytes);
    if (!request.ok()) return false;
    if (out.route == MadRoute::smi_lid && (!sm_answers || out.dlid.value != sm_lid)) return true;  // lost
    mad::SmpHeader h = request->header;
    h.method = mad::method::kGetResp;
    h.direction = h.directed_route;
    std::vector<std::uint8_t> data;
    if (h.attr_id == mad::attr::kPortInfo) {
      mad::PortInfo info;
      info.lid = lid;
      info.master_sm_lid = sm_lid;
      info.port_state = static_cast<std::uint8_t>(mad::PortState::active);
      const auto bytes = mad::encode_port_info(info);
      data.assign(bytes.begin(), bytes.end());
    } else {
      mad::SmInfo info;
      info.guid = sm_guid;
      info.act_count = act_count;
      info.sm_state = static_cast<std::uint8_t>(mad::SmState::master);
      const auto bytes = mad::encode_sm_info(info);
      data.assign(bytes.begin(), bytes.end());
    }
    const mad::MadBuffer reply = mad::encode_smp(h, data);
    ReceivedMad in;
    in.bytes.assign(reply.begin(), reply.end());
    in.slid = out.route == MadRoute::smi_lid ? out.dlid : core::Lid{mad::kPermissiveLid};
    asio::post(loop_, [this, in] { requester_->on_receive(in); });
    act_count += 10;
    return true;
  }

  std::uint16_t lid = 5, sm_lid = 1;
  std::uint64_t sm_guid = 0x200000;
  std::uint32_t act_count = 100;
  bool sm_answers = true;

 private:
  asio::io_context& loop_;
  MadRequester* requester_ = nullptr;
};

class PortMonitorTest : public ::testing::Test {
 protected:
  PortMonitorTest() { subnet.attach(requester); }

  // Runs the loop until `n` more events of that kind arrived (at most 2,000 handlers: the
  // monitor polls forever).
  void run_until(const std::size_t& counter, std::size_t n) {
    const std::size_t target = counter + n;
    for (int i = 0; i < 2000 && counter < target && loop.run_one_for(2s) > 0; ++i) {
    }
  }
  // Runs `n` more local polls.
  void run_polls(std::uint64_t n) {
    const std::uint64_t target = requester.counters().local_sent + n;
    while (requester.counters().local_sent < target && loop.run_one_for(2s) > 0) {
    }
  }
  std::uint64_t remote() const { return requester.counters().remote_sent; }

  asio::io_context loop;
  FakeSubnet subnet{loop};
  MadRequester requester{loop, subnet, 11};
  std::vector<core::LocalPort> ports;
  std::size_t port_events = 0;
  std::size_t sm_changes = 0;
  std::optional<bool> sa_state_kept;  // what the fake SA says about our subscription
  std::size_t refreshes = 0;
  PortMonitor monitor{loop, requester, core::Gid::from_parts(0xfe80000000000000ULL, 3), 1,
                      MonitorSettings{.poll = 10ms, .routine = 1h, .check_policy = RetryPolicy{2ms, 0, 0.25, 8}},
                      PortMonitor::Events{[this](const core::LocalPort& p, std::uint8_t) {
                                            ports.push_back(p);
                                            ++port_events;
                                          },
                                          [this] { ++sm_changes; },
                                          [this](core::Lid, std::function<void(std::optional<bool>)> done) {
                                            done(sa_state_kept);
                                          },
                                          [this] { ++refreshes; }}};
};

TEST_F(PortMonitorTest, FirstPollReportsTheLocalPort) {
  monitor.start();
  run_until(port_events, 1);
  ASSERT_EQ(ports.size(), 1U);
  EXPECT_EQ(ports[0].lid.value, 5);
  EXPECT_EQ(ports[0].sm_lid.value, 1);
  EXPECT_TRUE(ports[0].active);
  EXPECT_EQ(monitor.local_port()->lid.value, 5);
  EXPECT_EQ(sm_changes, 0U);
}

TEST_F(PortMonitorTest, LidChangeIsReported) {
  monitor.start();
  run_until(port_events, 1);
  subnet.lid = 9;
  run_until(port_events, 1);
  ASSERT_EQ(ports.size(), 2U);
  EXPECT_EQ(ports[1].lid.value, 9);
  EXPECT_EQ(sm_changes, 0U);
}

TEST_F(PortMonitorTest, OnlyTheFirstPollAsksTheSmWhileNothingChanges) {
  monitor.start();
  run_until(port_events, 1);
  run_polls(50);
  EXPECT_EQ(remote(), 1U);  // the first poll's SMInfo; then local PortInfo only
  EXPECT_EQ(sm_changes, 0U);
}

TEST_F(PortMonitorTest, SmRestartIsSeenOnceSomethingSuggestsIt) {
  monitor.start();
  run_until(port_events, 1);
  subnet.act_count = 1;  // the restarted SM counts from scratch
  run_polls(5);
  EXPECT_EQ(sm_changes, 0U);  // not asked: nothing local changed
  monitor.remote_timeout(core::SteadyClock{}.now());  // an SA query timed out, nothing heard since
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
  EXPECT_EQ(ports.size(), 1U);
}

TEST_F(PortMonitorTest, SmSilentThenBackIsReportedAndAskedEveryPollMeanwhile) {
  monitor.start();
  run_until(port_events, 1);
  subnet.sm_answers = false;
  monitor.remote_timeout(core::SteadyClock{}.now());
  const std::uint64_t timeouts_before = requester.counters().timeouts;
  while (requester.counters().timeouts < timeouts_before + 2 && loop.run_one_for(2s) > 0) {
  }
  EXPECT_EQ(sm_changes, 0U);
  subnet.sm_answers = true;
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
  const std::uint64_t settled = remote();
  run_polls(20);
  EXPECT_EQ(remote(), settled + 1);  // one full check for the new SM's baseline, then quiet
}

// The SM's LID answered after the attempt went out: it is alive behind a queue, no check.
TEST_F(PortMonitorTest, TimeoutAfterWhichTheSmAnsweredAsksNothing) {
  monitor.start();
  run_until(port_events, 1);
  subnet.act_count = 1;  // a restart only a check would see
  const core::TimePoint sent = core::SteadyClock{}.now();
  monitor.heard(sent + 1ms);
  monitor.remote_timeout(sent);
  run_polls(5);
  EXPECT_EQ(remote(), 1U);
  EXPECT_EQ(sm_changes, 0U);
}

// The first SM found refreshes the SM state at once; an SM change (no spread set) does too, once.
TEST_F(PortMonitorTest, FirstSmAndEachSmChangeRefreshTheSmStateOnce) {
  monitor.start();
  run_until(port_events, 1);
  monitor.sm_found();
  EXPECT_EQ(refreshes, 1U);
  monitor.on_port_event(PortEvent::client_reregister);
  EXPECT_EQ(refreshes, 2U);
  run_polls(5);
  EXPECT_EQ(refreshes, 2U);
}

TEST_F(PortMonitorTest, ClientReregisterEventIsOneSmChange) {
  monitor.start();
  run_until(port_events, 1);
  subnet.act_count = 1;
  monitor.on_port_event(PortEvent::client_reregister);
  EXPECT_EQ(sm_changes, 1U);  // at once
  const std::uint64_t before = remote();
  run_polls(5);
  EXPECT_EQ(remote(), before + 1);  // one full check: the new SM's baseline, not a second change
  EXPECT_EQ(sm_changes, 1U);
}

TEST_F(PortMonitorTest, LidChangeEventPollsAtOnceAndAsksTheSm) {
  monitor.start();
  run_until(port_events, 1);
  subnet.lid = 9;
  const std::uint64_t local_before = requester.counters().local_sent;
  monitor.on_port_event(PortEvent::lid_change);
  EXPECT_EQ(requester.counters().local_sent, local_before + 1);  // sent before any timer ran
  run_until(port_events, 1);
  EXPECT_EQ(ports.back().lid.value, 9);
  run_polls(3);  // the full check comes at most once per half poll interval
  EXPECT_EQ(remote(), 2U);
}

TEST_F(PortMonitorTest, FailOverToAnotherSmLidIsReported) {
  monitor.start();
  run_until(port_events, 1);
  subnet.sm_lid = 7;
  subnet.sm_guid = 0x300000;
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
  ASSERT_EQ(ports.size(), 2U);
  EXPECT_EQ(ports[1].sm_lid.value, 7);
}

TEST_F(PortMonitorTest, LocalLidChangeAlsoAsksTheSm) {
  monitor.start();
  run_until(port_events, 1);
  subnet.lid = 9;
  subnet.act_count = 1;  // an SM restart that moved the LIDs
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
}

// The routine check: one MAD per interval. With a subscription to check, it is the SA check.
TEST(PortMonitorRoutineTest, RoutineCheckSeesAnSaThatForgotUs) {
  asio::io_context loop;
  FakeSubnet subnet{loop};
  MadRequester requester{loop, subnet, 12};
  subnet.attach(requester);
  std::size_t sm_changes = 0;
  std::size_t sa_checks = 0;
  std::optional<bool> kept = true;
  PortMonitor monitor{loop, requester, core::Gid::from_parts(0xfe80000000000000ULL, 3), 1,
                      MonitorSettings{.poll = 5ms, .routine = 20ms, .check_policy = RetryPolicy{2ms, 0, 0.25, 8}},
                      PortMonitor::Events{nullptr, [&] { ++sm_changes; },
                                          [&](core::Lid, std::function<void(std::optional<bool>)> done) {
                                            ++sa_checks;
                                            done(kept);
                                          },
                                          nullptr}};
  monitor.start();
  monitor.subscription_confirmed();  // traps 64 and 65: there is a subscription to check
  monitor.subscription_confirmed();
  while (sa_checks < 3 && loop.run_one_for(2s) > 0) {
  }
  EXPECT_EQ(requester.counters().remote_sent, 1U);  // the first SMInfo; routine checks go to the SA
  EXPECT_EQ(sm_changes, 0U);
  subnet.act_count = 1'000'000;  // a restarted SM whose sweep overtook the old ActCount
  kept = false;
  while (sm_changes < 1 && loop.run_one_for(2s) > 0) {
  }
  EXPECT_EQ(sm_changes, 1U);
}

}  // namespace
}  // namespace ibat::fabric
