// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The RMPP protocol of the lab's MAD layer twin, as the kernel's mad_rmpp.c runs it: the receiver
// (ACKs at the window's end, segments held past a gap, repeats re-ACKed or dropped, ABORT for
// malformed or timed-out transfers) and the sender (window, resend from the last ACK, retries).
#include "rmpp_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace ibat::umad_twin {
namespace {

using namespace std::chrono_literals;
using Kind = Reassembler::Result::Kind;

constexpr Reassembler::Source kFrom{5, 1};
const RmppClock::time_point t0{};

// An SA GetTable answer of `data` bytes (RMPP ACTIVE set by the sender), cut into segments.
Bytes sa_message(std::size_t data, std::uint64_t tid_value = 0x1234'5678'9abc'def0) {
  Bytes m(56 + data);
  std::iota(m.begin(), m.end(), std::uint8_t{7});
  m[0] = 1;
  m[1] = 0x03;
  m[2] = 2;
  m[3] = 0x92;  // GetTableResp
  m[24] = 0;
  m[25] = 0;
  m[26] = 0x71;  // RRespTime 14, ACTIVE
  set_tid(m, tid_value);
  return m;
}

std::vector<Bytes> segments_of(std::size_t count) { return segment(sa_message(count * 200)); }

// The joined message: segment 1's headers (its RMPP header filled in by the sender), then the data.
void expect_joined(const Reassembler::Result& r, const Bytes& message) {
  ASSERT_EQ(r.kind, Kind::complete) << r.reason;
  ASSERT_EQ(r.message.size(), message.size());
  EXPECT_TRUE(std::equal(r.message.begin() + 56, r.message.end(), message.begin() + 56)) << "in order";
}

void expect_ack(const Bytes& reply, std::uint32_t segment, std::uint32_t window_last) {
  ASSERT_EQ(reply.size(), kMadBytes);
  EXPECT_EQ(rmpp_type(reply), kRmppTypeAck);
  EXPECT_EQ(method(reply), 0x12) << "back toward the sender";
  EXPECT_EQ(segment_number(reply), segment);
  EXPECT_EQ(payload_length(reply), window_last);
}

void expect_abort(const Reassembler::Result& r, std::uint8_t status) {
  EXPECT_EQ(r.kind, Kind::dropped) << r.reason;
  ASSERT_EQ(r.reply.size(), kMadBytes) << r.reason;
  EXPECT_EQ(rmpp_type(r.reply), kRmppTypeAbort);
  EXPECT_EQ(rmpp_status(r.reply), status) << r.reason;
}

TEST(RmppReceiver, TheFirstSegmentIsAckedWithTheKernelsWindow) {
  const auto segs = segments_of(10);
  Reassembler r;
  const auto first = r.add(kFrom, segs[0], t0);
  EXPECT_EQ(first.kind, Kind::incomplete);
  expect_ack(first.reply, 1, 1 + kRmppWindow);
  for (std::size_t i = 1; i + 1 < segs.size(); ++i) EXPECT_TRUE(r.add(kFrom, segs[i], t0).reply.empty()) << i;
  const auto last = r.add(kFrom, segs.back(), t0);
  ASSERT_EQ(last.kind, Kind::complete);
  expect_ack(last.reply, 10, 1 + kRmppWindow);
  EXPECT_EQ(last.message.size(), 56u + 10 * 200);
}

TEST(RmppReceiver, ALostSegmentIsHeldAroundAndTheResendFillsTheGap) {
  const Bytes message = sa_message(10 * 200);
  const auto segs = segment(message);
  Reassembler r;
  r.add(kFrom, segs[0], t0);
  r.add(kFrom, segs[1], t0);
  r.add(kFrom, segs[2], t0);  // segment 4 lost on the wire
  for (std::size_t i = 4; i < segs.size(); ++i) {
    const auto held = r.add(kFrom, segs[i], t0);
    EXPECT_EQ(held.kind, Kind::incomplete);
    EXPECT_EQ(held.reason, "segment " + std::to_string(i + 1) + " held until segment 4 comes");
    EXPECT_TRUE(held.reply.empty()) << "no ACK for a segment past a gap: the sender's timer resends";
  }
  // The sender's resend starts after the last ACKed segment, 1.
  const auto repeat = r.add(kFrom, segs[1], t0);
  EXPECT_EQ(repeat.kind, Kind::ignored);
  EXPECT_EQ(repeat.reason, "repeat of segment 2");
  EXPECT_TRUE(repeat.reply.empty());
  r.add(kFrom, segs[2], t0);
  const auto filled = r.add(kFrom, segs[3], t0);
  expect_joined(filled, message);
  expect_ack(filled.reply, 10, 65);
  for (std::size_t i = 4; i < segs.size(); ++i) {
    const auto late = r.add(kFrom, segs[i], t0);
    EXPECT_EQ(late.kind, Kind::ignored) << "joined once, never again";
    expect_ack(late.reply, 10, 65);
  }
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(RmppReceiver, OutOfOrderSegmentsJoinInOrder) {
  const Bytes message = sa_message(5 * 200 - 30);
  const auto segs = segment(message);
  ASSERT_EQ(segs.size(), 5u);
  Reassembler r;
  r.add(kFrom, segs[0], t0);
  for (std::size_t i : {2u, 1u, 4u}) {
    const auto result = r.add(kFrom, segs[i], t0);
    EXPECT_EQ(result.kind, Kind::incomplete) << i;
    EXPECT_TRUE(result.reply.empty()) << i;
  }
  expect_joined(r.add(kFrom, segs[3], t0), message);
}

TEST(RmppReceiver, TheWindowsEndIsAckedAndTheNextWindowGranted) {
  const auto segs = segments_of(10);
  Reassembler r(1 << 20, 4);
  expect_ack(r.add(kFrom, segs[0], t0).reply, 1, 5);
  const auto beyond = r.add(kFrom, segs[6], t0);
  EXPECT_EQ(beyond.kind, Kind::ignored);
  EXPECT_EQ(beyond.reason, "segment 7 beyond the window ending at 5");
  EXPECT_TRUE(beyond.reply.empty());
  for (std::size_t i = 1; i < 4; ++i) EXPECT_TRUE(r.add(kFrom, segs[i], t0).reply.empty());
  expect_ack(r.add(kFrom, segs[4], t0).reply, 5, 9);
  for (std::size_t i = 5; i < 8; ++i) EXPECT_TRUE(r.add(kFrom, segs[i], t0).reply.empty());
  expect_ack(r.add(kFrom, segs[8], t0).reply, 9, 13);
  const auto done = r.add(kFrom, segs[9], t0);
  EXPECT_EQ(done.kind, Kind::complete);
  expect_ack(done.reply, 10, 13);
}

TEST(RmppReceiver, ARepeatOfAnAckedSegmentIsAckedAgainOtherRepeatsAreDropped) {
  const auto segs = segments_of(4);
  Reassembler r;
  r.add(kFrom, segs[0], t0);
  const auto again = r.add(kFrom, segs[0], t0);  // the sender missed the ACK and resent segment 1
  EXPECT_EQ(again.kind, Kind::ignored);
  EXPECT_EQ(again.reason, "repeat of segment 1, ACKed again");
  expect_ack(again.reply, 1, 65);
  r.add(kFrom, segs[1], t0);
  const auto repeat = r.add(kFrom, segs[1], t0);
  EXPECT_EQ(repeat.reason, "repeat of segment 2");
  EXPECT_TRUE(repeat.reply.empty()) << "not ACKed yet: the kernel drops it";
  r.add(kFrom, segs[2], t0);
  EXPECT_EQ(r.add(kFrom, segs[3], t0).kind, Kind::complete);
}

TEST(RmppReceiver, MalformedSegmentsAreAbortedWithTheirStatus) {
  auto segs = segments_of(5);
  Reassembler r;
  const auto short_one = r.add(kFrom, std::span(segs[0]).first(100), t0);
  EXPECT_EQ(short_one.kind, Kind::dropped);
  EXPECT_TRUE(short_one.reply.empty());

  auto misnumbered = segs[0];
  misnumbered[31] = 4;  // FIRST, numbered 4
  const auto first_not_1 = r.add(kFrom, misnumbered, t0);
  expect_abort(first_not_1, kRmppStatusBadSegment);
  EXPECT_EQ(first_not_1.reason, "FIRST segment numbered 4");
  EXPECT_EQ(method(first_not_1.reply), 0x12) << "the ABORT goes back to the sender";
  auto no_first = segs[0];
  no_first[26] &= static_cast<std::uint8_t>(~kRmppFlagFirst);
  expect_abort(r.add(kFrom, no_first, t0), kRmppStatusBadSegment);
  auto with_status = segs[0];
  with_status[27] = 3;
  expect_abort(r.add(kFrom, with_status, t0), kRmppStatusIllegalStatus);

  r.add(kFrom, segs[0], t0);
  auto early_last = segs[1];
  early_last[26] |= kRmppFlagLast;  // the stream ends after 2 of the 5 announced, the 2nd full
  early_last[35] = 220;
  const auto disagree = r.add(kFrom, early_last, t0);
  expect_abort(disagree, kRmppStatusBadLength);
  EXPECT_NE(disagree.reason.find("first segment announced"), std::string::npos) << disagree.reason;
  auto bad_length = segment(sa_message(10))[0];
  bad_length[35] = 0xff;  // PayloadLength 255: more than a segment holds
  expect_abort(r.add(kFrom, bad_length, t0), kRmppStatusBadLength);
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(RmppReceiver, AnyRmppMadOfAnotherVersionOrAnUnknownTypeIsRefused) {
  auto mad = segments_of(1)[0];
  EXPECT_EQ(rmpp_fault(mad), std::nullopt);
  mad[24] = 2;
  EXPECT_EQ(rmpp_fault(mad), kRmppStatusBadVersion);
  mad[24] = 1;
  mad[25] = 5;
  EXPECT_EQ(rmpp_fault(mad), kRmppStatusBadType);
  mad[25] = kRmppTypeAbort;
  EXPECT_EQ(rmpp_fault(mad), std::nullopt);
}

TEST(RmppReceiver, ATransferNotJoinedInTimeIsAbortedAJoinedOneForgotten) {
  const auto segs = segments_of(3);
  Reassembler r;
  r.add(kFrom, segs[0], t0);
  r.add(kFrom, segs[1], t0 + 30s);
  EXPECT_EQ(r.next_deadline(), t0 + kRmppTransferLifetime) << "the whole transfer's time, from its start";
  EXPECT_TRUE(r.expire(t0 + 39s).empty());
  const auto expired = r.expire(t0 + 40s);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].source, kFrom);
  EXPECT_EQ(rmpp_type(expired[0].abort), kRmppTypeAbort);
  EXPECT_EQ(rmpp_status(expired[0].abort), kRmppStatusTotalTimeTooLong);
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_EQ(r.add(kFrom, segs[2], t0 + 41s).reason, "segment 3 of no message begun");

  for (const auto& s : segs) r.add(kFrom, s, t0 + 50s);
  EXPECT_EQ(r.next_deadline(), t0 + 50s + kRmppJoinedMemory);
  EXPECT_FALSE(r.add(kFrom, segs[2], t0 + 59s).reply.empty()) << "re-ACKed while remembered";
  EXPECT_TRUE(r.expire(t0 + 60s).empty()) << "a joined message is forgotten without an ABORT";
  EXPECT_EQ(r.next_deadline(), std::nullopt);
}

TEST(RmppReceiver, AMessageBeyondTheBoundIsStopped) {
  Reassembler r(1000);
  const auto segs = segments_of(10);
  Reassembler::Result over;
  for (const auto& s : segs) {
    over = r.add(kFrom, s, t0);
    if (over.kind == Kind::dropped) break;
  }
  ASSERT_EQ(over.kind, Kind::dropped);
  EXPECT_EQ(rmpp_type(over.reply), kRmppTypeStop);
  EXPECT_EQ(rmpp_status(over.reply), kRmppStatusResourcesExhausted);
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(RmppReceiver, MessagesFromTwoSourcesOrTwoTidsJoinApart) {
  const auto a = segment(sa_message(600, 1));
  const auto b = segment(sa_message(400, 2));
  const Reassembler::Source other{6, 1};
  Reassembler r;
  r.add(kFrom, a[0], t0);
  r.add(other, a[0], t0);  // same TID from another LID
  r.add(kFrom, b[0], t0);
  r.add(kFrom, a[1], t0);
  r.add(other, a[1], t0);
  EXPECT_EQ(r.add(kFrom, b[1], t0).message.size(), 56u + 400);
  EXPECT_EQ(r.add(kFrom, a[2], t0).message.size(), 56u + 600);
  EXPECT_EQ(r.add(other, a[2], t0).message.size(), 56u + 600);
}

TEST(RmppSender, TheFirstWindowIsOneSegmentTheReceiversAckOpensTheRest) {
  RmppSender s(10, 3);
  const auto first = s.start();
  EXPECT_EQ(first.first, 1u);
  EXPECT_EQ(first.last, 1u);
  const auto opened = s.on_ack(1, 65, 0);
  EXPECT_EQ(opened.send.first, 2u);
  EXPECT_EQ(opened.send.last, 10u);
  EXPECT_FALSE(opened.completed);
  EXPECT_FALSE(s.acknowledged());
  const auto done = s.on_ack(10, 65, 0);
  EXPECT_TRUE(done.completed);
  EXPECT_TRUE(done.send.empty());
  EXPECT_TRUE(s.acknowledged());
  EXPECT_FALSE(s.on_ack(10, 65, 0).completed) << "a repeat of the last ACK completes nothing";
}

TEST(RmppSender, TheWindowBoundsTheSegmentsInFlight) {
  RmppSender s(100, 3);
  s.start();
  const auto window = s.on_ack(1, 65, 0);
  EXPECT_EQ(window.send.count(), 64u);
  EXPECT_EQ(window.send.last, 65u);
  EXPECT_TRUE(s.on_ack(30, 65, 0).send.empty()) << "the window has not moved";
  EXPECT_EQ(s.last_acknowledged(), 30u);
  const auto next = s.on_ack(65, 129, 0);
  EXPECT_EQ(next.send.first, 66u);
  EXPECT_EQ(next.send.last, 100u);
  EXPECT_TRUE(s.on_ack(100, 129, 0).completed);
}

TEST(RmppSender, ATimeoutResendsFromTheSegmentAfterTheLastAcked) {
  RmppSender s(10, 3);
  s.start();
  s.on_ack(1, 65, 0);
  const auto resend = s.on_timeout();
  ASSERT_TRUE(resend);
  EXPECT_EQ(resend->first, 2u);
  EXPECT_EQ(resend->last, 10u);
  s.on_ack(5, 65, 0);
  const auto again = s.on_timeout();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->first, 6u);
  EXPECT_EQ(again->last, 10u);
}

TEST(RmppSender, RetriesRunOutUnlessAnAckMovesOn) {
  RmppSender stuck(10, 2);
  stuck.start();
  EXPECT_TRUE(stuck.on_timeout());
  EXPECT_TRUE(stuck.on_timeout());
  EXPECT_FALSE(stuck.on_timeout()) << "2 retries, then the send times out";

  RmppSender moving(10, 1);
  moving.start();
  EXPECT_TRUE(moving.on_timeout());
  moving.on_ack(1, 65, 0);  // progress renews the retries
  EXPECT_TRUE(moving.on_timeout());
  EXPECT_FALSE(moving.on_timeout());

  RmppSender through(1, 3);
  through.start();
  EXPECT_TRUE(through.on_ack(1, 1, 0).completed);
  EXPECT_FALSE(through.on_timeout()) << "all acknowledged: the answer's wait is not resent";
}

TEST(RmppSender, BadAcksAreAbortedOldOnesIgnored) {
  const auto aborted = [](RmppSender::Reaction r, std::uint8_t status) {
    EXPECT_EQ(r.abort, status);
    EXPECT_TRUE(r.ended);
  };
  {
    RmppSender s(10, 3);
    s.start();
    aborted(s.on_ack(1, 65, 7), kRmppStatusIllegalStatus);
  }
  {
    RmppSender s(10, 3);
    s.start();
    aborted(s.on_ack(5, 3, 0), kRmppStatusWindowTooSmall);
  }
  {
    RmppSender s(10, 3);
    s.start();
    aborted(s.on_ack(2, 65, 0), kRmppStatusSegmentTooBig);  // segment 2 was never sent (window 1)
  }
  {
    RmppSender s(10, 3);
    s.start();
    s.on_ack(1, 65, 0);
    aborted(s.on_ack(11, 65, 0), kRmppStatusSegmentTooBig);
  }
  RmppSender s(10, 3);
  s.start();
  s.on_ack(1, 65, 0);
  const auto smaller = s.on_ack(1, 30, 0);
  EXPECT_FALSE(smaller.abort);
  EXPECT_FALSE(smaller.ended);
  EXPECT_TRUE(smaller.send.empty()) << "an ACK older than the last seen";
  EXPECT_EQ(s.window_last(), 65u);
}

TEST(RmppSender, StopAndAbortEndTheTransfer) {
  RmppSender a(10, 3);
  a.start();
  const auto abort = a.on_abort(kRmppStatusTotalTimeTooLong);
  EXPECT_TRUE(abort.ended);
  EXPECT_FALSE(abort.abort);
  RmppSender b(10, 3);
  b.start();
  EXPECT_EQ(b.on_abort(5).abort, kRmppStatusIllegalStatus) << "ABORT statuses are 118-127";
  RmppSender c(10, 3);
  c.start();
  EXPECT_TRUE(c.on_stop(kRmppStatusResourcesExhausted).ended);
  RmppSender d(10, 3);
  d.start();
  EXPECT_EQ(d.on_stop(0).abort, kRmppStatusIllegalStatus);
  RmppSender e(1, 3);
  e.start();
  e.on_ack(1, 1, 0);
  EXPECT_FALSE(e.on_abort(kRmppStatusTotalTimeTooLong).ended) << "every segment got through: the send waits on";
}

TEST(RmppSender, TheAckWaitIsTheSendsTimeoutAtMostTwoSeconds) {
  EXPECT_EQ(rmpp_ack_wait(0), 2000ms);
  EXPECT_EQ(rmpp_ack_wait(500), 500ms);
  EXPECT_EQ(rmpp_ack_wait(5000), 2000ms);
}

}  // namespace
}  // namespace ibat::umad_twin
