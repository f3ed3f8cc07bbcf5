// PortMonitor against a fake SM: it polls PortInfo (directed route) then SMInfo (to the SM LID
// that PortInfo named) and reports the initial port, LID changes and SM restarts / fail-overs.
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

  // Runs the loop until `n` more events of that kind arrived (or nothing is left to run).
  void run_until(const std::size_t& counter, std::size_t n) {
    const std::size_t target = counter + n;
    while (counter < target && loop.run_one_for(2s) > 0) {
    }
  }

  asio::io_context loop;
  FakeSubnet subnet{loop};
  MadRequester requester{loop, subnet, 11};
  std::vector<core::LocalPort> ports;
  std::size_t port_events = 0;
  std::size_t sm_changes = 0;
  std::optional<bool> sa_state_kept;  // what the fake SA says about our subscription
  PortMonitor monitor{loop, requester, core::Gid::from_parts(0xfe80000000000000ULL, 3), 1, 10ms,
                      RetryPolicy{2ms, 0, 0.25, 8},
                      PortMonitor::Events{[this](const core::LocalPort& p, std::uint8_t) {
                                            ports.push_back(p);
                                            ++port_events;
                                          },
                                          [this] { ++sm_changes; },
                                          [this](core::Lid, std::function<void(std::optional<bool>)> done) {
                                            done(sa_state_kept);
                                          }}};
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

TEST_F(PortMonitorTest, SmRestartOnTheSameNodeIsReported) {
  monitor.start();
  run_until(port_events, 1);
  subnet.act_count = 1;  // the restarted SM counts from scratch
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
  EXPECT_EQ(ports.size(), 1U);
}

TEST_F(PortMonitorTest, SmSilentThenBackIsReported) {
  monitor.start();
  run_until(port_events, 1);
  subnet.sm_answers = false;
  const std::uint64_t timeouts_before = requester.counters().timeouts;
  while (requester.counters().timeouts < timeouts_before + 2 && loop.run_one_for(2s) > 0) {
  }
  EXPECT_EQ(sm_changes, 0U);
  subnet.sm_answers = true;
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
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

TEST_F(PortMonitorTest, SaThatForgotUsIsReportedAsAnSmChange) {
  monitor.start();
  run_until(port_events, 1);
  subnet.act_count = 1'000'000;  // a restarted SM whose sweep overtook the old ActCount
  sa_state_kept = false;
  run_until(sm_changes, 1);
  EXPECT_EQ(sm_changes, 1U);
}

}  // namespace
}  // namespace ibat::fabric
