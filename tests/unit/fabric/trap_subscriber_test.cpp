// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TrapSubscriber: InformInfo SETs for traps 64/65, a ReportResp (whole TID echoed) for every
// Report, one event per distinct Report, and non-Reports left alone.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>

#include "fabric/trap_subscriber.h"
#include "fake_sender.h"
#include "mad/inform_info.h"
#include "mad/notice.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

constexpr core::Lid kSmLid{1};

class TrapSubscriberTest : public ::testing::Test {
 protected:
  ReceivedMad report(std::uint16_t trap, const core::Gid& gid, std::uint64_t tid) {
    const auto notice = mad::gid_service_notice(trap, gid, core::Lid{1}, core::Gid{});
    const mad::MadBuffer bytes = mad::build_report(tid, notice);
    ReceivedMad mad;
    mad.bytes.assign(bytes.begin(), bytes.end());
    mad.slid = kSmLid;
    mad.source_qpn = 1;
    return mad;
  }

  asio::io_context loop;
  test::FakeSender sender;
  MadRequester requester{loop, sender, 3};
  std::vector<std::pair<std::uint16_t, core::Gid>> events;
  std::vector<std::pair<std::uint16_t, bool>> subscribed;
  TrapSubscriber traps{requester, sender, RetryPolicy{5ms, 1, 0.25, 8},
                       TrapSubscriber::Events{
                           [this](const core::Gid& g) { events.emplace_back(64, g); },
                           [this](const core::Gid& g) { events.emplace_back(65, g); },
                           [this](std::uint16_t trap, bool ok) { subscribed.emplace_back(trap, ok); }}};
  const core::Gid host = core::Gid::from_parts(0xfe80000000000000ULL, 0x100003);
};

TEST_F(TrapSubscriberTest, SubscribesToTraps64And65AtTheSm) {
  traps.subscribe(core::Lid{4}, 0);
  ASSERT_EQ(sender.sent.size(), 2U);
  std::vector<std::uint16_t> trap_numbers;
  for (const OutgoingMad& out : sender.sent) {
    EXPECT_EQ(out.dlid, core::Lid{4});
    auto mad = mad::decode_sa_mad(out.bytes);
    ASSERT_TRUE(mad.ok());
    EXPECT_EQ(mad->header.method, mad::method::kSet);
    EXPECT_EQ(mad->header.attr_id, mad::attr::kInformInfo);
    auto info = mad::decode_inform_info(mad->data);
    ASSERT_TRUE(info.ok());
    EXPECT_TRUE(info->subscribe);
    EXPECT_EQ(info->lid_range_begin, 0xFFFF);
    trap_numbers.push_back(info->trap_number);
  }
  EXPECT_EQ(trap_numbers, (std::vector<std::uint16_t>{64, 65}));
  // OpenSM answers a SET with a GetResp echoing the InformInfo.
  const auto sa_mad = mad::decode_sa_mad(sender.sent[0].bytes);
  requester.on_receive(test::sa_answer(sender.sent[0], mad::attr::kInformInfo,
                                       sa_mad->data.first(mad::kInformInfoSize + 4), core::Lid{4}));
  loop.run();
  ASSERT_EQ(subscribed.size(), 2U);
  EXPECT_EQ(subscribed[0], std::make_pair(std::uint16_t{64}, true));
  EXPECT_EQ(subscribed[1], std::make_pair(std::uint16_t{65}, false));  // never answered
}

TEST_F(TrapSubscriberTest, EveryReportIsAnsweredWithTheWholeTidAndReportedOnce) {
  const std::uint64_t tid = 0x1234567800000042ULL;
  EXPECT_TRUE(traps.on_unsolicited(report(65, host, tid), kSmLid));
  EXPECT_TRUE(traps.on_unsolicited(report(65, host, tid), kSmLid));  // OpenSM resent it
  EXPECT_TRUE(traps.on_unsolicited(report(64, host, tid + 1), kSmLid));
  ASSERT_EQ(sender.sent.size(), 3U);
  auto resp = mad::decode_mad_header(sender.sent[0].bytes);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->method, mad::method::kReportResp);
  EXPECT_EQ(resp->tid, tid);
  EXPECT_EQ(sender.sent[0].dlid, core::Lid{1});
  EXPECT_EQ(sender.sent[0].timeout_ms, 0U);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0], std::make_pair(std::uint16_t{65}, host));
  EXPECT_EQ(events[1], std::make_pair(std::uint16_t{64}, host));
  EXPECT_EQ(traps.reports(), 3U);
}

TEST_F(TrapSubscriberTest, NonReportsAreNotConsumed) {
  OutgoingMad get;
  get.bytes.assign(mad::kMadSize, 0);
  const ReceivedMad answer = test::sa_answer(get, mad::attr::kPathRecord, {}, kSmLid);
  EXPECT_FALSE(traps.on_unsolicited(answer, kSmLid));
  EXPECT_TRUE(sender.sent.empty());
}

TEST_F(TrapSubscriberTest, ReportsFromAnyLidButTheSmAreDroppedUnansweredAndCounted) {
  ReceivedMad forged = report(65, host, 0x77);
  forged.slid = core::Lid{9};  // another node (or the old SM after a fail-over)
  EXPECT_TRUE(traps.on_unsolicited(forged, kSmLid));
  EXPECT_TRUE(traps.on_unsolicited(report(65, host, 0x78), core::Lid{0}));  // SM not known yet
  EXPECT_TRUE(sender.sent.empty());
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(traps.rejected_reports(), 2U);
  EXPECT_EQ(traps.reports(), 0U);
  EXPECT_TRUE(traps.on_unsolicited(report(65, host, 0x79), kSmLid));
  EXPECT_EQ(events.size(), 1U);
}

}  // namespace
}  // namespace ibat::fabric
