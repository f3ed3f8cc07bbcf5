// RMPP of the lab's MAD layer twin: messages of 1 to N segments cut and joined as the kernel does,
// and what a gap, a repeat, a truncated or out-of-order stream does to a message.
#include "rmpp.h"

#include <gtest/gtest.h>

#include <numeric>

namespace ibat::umad_twin {
namespace {

// An SA GetTable answer: 56-byte SA header (RMPP ACTIVE set by the sender) and `data` bytes.
Bytes sa_message(std::size_t data, std::uint64_t tid_value = 0x1234'5678'9abc'def0) {
  Bytes m(56 + data);
  std::iota(m.begin(), m.end(), std::uint8_t{7});
  m[0] = 1;
  m[1] = 0x03;      // SA
  m[2] = 2;
  m[3] = 0x92;      // GetTableResp
  m[24] = 0;        // OpenSM leaves RMPPVersion to the kernel
  m[25] = 0;
  m[26] = 0x71;     // RRespTime 14, ACTIVE
  set_tid(m, tid_value);
  return m;
}

Bytes join(Reassembler& r, const std::vector<Bytes>& segments, std::uint16_t lid = 5) {
  Reassembler::Result last;
  for (const Bytes& s : segments) last = r.add(lid, s);
  EXPECT_EQ(last.kind, Reassembler::Result::Kind::complete) << last.reason;
  return last.message;
}

TEST(Rmpp, OneToManySegmentsCarryTheMessageAndJoinBackWhole) {
  // data sizes: none, one PathRecord, exactly one segment, one byte more, three full, 66 records
  for (std::size_t data : {0u, 64u, 200u, 201u, 600u, 66u * 64u}) {
    const Bytes message = sa_message(data);
    const auto segments = segment(message);
    const std::size_t expected = std::max<std::size_t>(1, (data + 199) / 200);
    ASSERT_EQ(segments.size(), expected) << data;
    const std::size_t pad = expected * 200 - data;
    for (std::size_t i = 0; i < segments.size(); ++i) {
      const Bytes& s = segments[i];
      ASSERT_EQ(s.size(), kMadBytes);
      EXPECT_TRUE(rmpp_active(s));
      EXPECT_EQ(s[24], 1) << "RMPPVersion filled in";
      EXPECT_EQ(s[25], kRmppTypeData);
      EXPECT_EQ(segment_number(s), i + 1);
      EXPECT_EQ(bool(rmpp_flags(s) & kRmppFlagFirst), i == 0);
      EXPECT_EQ(bool(rmpp_flags(s) & kRmppFlagLast), i + 1 == expected);
      EXPECT_EQ(s[26] & 0xf8, 0x70) << "RRespTime kept";
      EXPECT_TRUE(std::equal(s.begin(), s.begin() + 24, message.begin())) << "MAD header in every segment";
      if (i + 1 == expected) EXPECT_EQ(payload_length(s), 220 - pad);
      else if (i == 0) EXPECT_EQ(payload_length(s), expected * 220 - pad);
      else EXPECT_EQ(payload_length(s), 0u);
    }
    Reassembler r;
    const Bytes joined = join(r, segments);
    ASSERT_EQ(joined.size(), message.size()) << data;
    EXPECT_TRUE(std::equal(joined.begin() + 56, joined.end(), message.begin() + 56)) << data;
    EXPECT_EQ(r.in_progress(), 0u);
  }
}

TEST(Rmpp, TheFirstSegmentAnnouncesTheWholeTransfer) {
  const auto segments = segment(sa_message(4 * 200 + 10));
  ASSERT_EQ(segments.size(), 5u);
  EXPECT_EQ(payload_length(segments[0]), 5 * 220 - 190);
  EXPECT_EQ(payload_length(segments[4]), 220 - 190);
}

TEST(Rmpp, ALostSegmentDropsTheMessageAndTheResendJoins) {
  const auto segments = segment(sa_message(5 * 64 * 10));
  ASSERT_GE(segments.size(), 4u);
  Reassembler r;
  EXPECT_EQ(r.add(5, segments[0]).kind, Reassembler::Result::Kind::incomplete);
  const auto gap = r.add(5, segments[2]);  // segment 2 lost on the wire
  EXPECT_EQ(gap.kind, Reassembler::Result::Kind::dropped);
  EXPECT_EQ(gap.reason, "segment 3 after 1");
  EXPECT_EQ(r.add(5, segments[3]).kind, Reassembler::Result::Kind::ignored) << "the rest of it is ignored";
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_EQ(join(r, segments).size(), 56u + 5 * 64 * 10) << "the requester's resend arrives whole";
}

TEST(Rmpp, OutOfOrderSegmentsDropTheMessage) {
  const auto segments = segment(sa_message(1000));
  Reassembler r;
  r.add(5, segments[0]);
  r.add(5, segments[1]);
  EXPECT_EQ(r.add(5, segments[3]).kind, Reassembler::Result::Kind::dropped);
  EXPECT_EQ(r.add(5, segments[2]).kind, Reassembler::Result::Kind::ignored);
}

TEST(Rmpp, ARepeatedSegmentIsIgnored) {
  const auto segments = segment(sa_message(600));
  Reassembler r;
  r.add(5, segments[0]);
  r.add(5, segments[1]);
  const auto again = r.add(5, segments[1]);
  EXPECT_EQ(again.kind, Reassembler::Result::Kind::ignored);
  EXPECT_EQ(again.reason, "repeat of segment 2");
  EXPECT_EQ(r.add(5, segments[2]).kind, Reassembler::Result::Kind::complete);
}

TEST(Rmpp, ATruncatedStreamStaysIncompleteUntilCleared) {
  const auto segments = segment(sa_message(1000));
  Reassembler r;
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) EXPECT_EQ(r.add(5, segments[i]).kind, Reassembler::Result::Kind::incomplete);
  EXPECT_EQ(r.in_progress(), 1u);
  r.clear();
  EXPECT_EQ(r.add(5, segments.back()).kind, Reassembler::Result::Kind::ignored);
}

TEST(Rmpp, ALastSegmentThatDisagreesWithTheFirstDropsTheMessage) {
  auto segments = segment(sa_message(1000));  // 5 segments
  Reassembler r;
  r.add(5, segments[0]);
  auto early_last = segments[1];
  early_last[26] |= kRmppFlagLast;  // the stream ends after 2 of the 5 announced, the 2nd full
  early_last[35] = 220;
  const auto result = r.add(5, early_last);
  EXPECT_EQ(result.kind, Reassembler::Result::Kind::dropped);
  EXPECT_NE(result.reason.find("first segment announced"), std::string::npos) << result.reason;
}

TEST(Rmpp, MalformedSegmentsAreDroppedWithAReason) {
  Reassembler r;
  const auto segments = segment(sa_message(600));
  EXPECT_EQ(r.add(5, std::span(segments[0]).first(100)).kind, Reassembler::Result::Kind::dropped);
  auto misnumbered = segments[0];
  misnumbered[31] = 4;  // FIRST, numbered 4
  EXPECT_EQ(r.add(5, misnumbered).reason, "FIRST segment numbered 4");
  auto bad_length = segment(sa_message(10))[0];
  bad_length[35] = 0xff;  // PayloadLength 255: more than a segment holds
  EXPECT_EQ(r.add(5, bad_length).kind, Reassembler::Result::Kind::dropped);
}

TEST(Rmpp, MessagesFromTwoSourcesOrTwoTidsJoinApart) {
  const auto a = segment(sa_message(600, 1));
  const auto b = segment(sa_message(400, 2));
  Reassembler r;
  r.add(5, a[0]);
  r.add(6, a[0]);  // same TID from another LID
  r.add(5, b[0]);
  r.add(5, a[1]);
  r.add(6, a[1]);
  EXPECT_EQ(r.add(5, b[1]).message.size(), 56u + 400);
  EXPECT_EQ(r.add(5, a[2]).message.size(), 56u + 600);
  EXPECT_EQ(r.add(6, a[2]).message.size(), 56u + 600);
}

TEST(Rmpp, AMessageBeyondTheBoundIsDropped) {
  Reassembler r(1000);
  const auto segments = segment(sa_message(2000));
  Reassembler::Result last;
  for (const auto& s : segments) last = r.add(5, s);
  EXPECT_EQ(last.kind, Reassembler::Result::Kind::ignored);
  EXPECT_EQ(r.in_progress(), 0u);
}

TEST(Rmpp, ClassHeadersFollowTheKernel) {
  EXPECT_EQ(data_offset(0x03), 56u);  // SA
  EXPECT_EQ(data_offset(0x06), 64u);  // device management
  EXPECT_EQ(data_offset(0x30), 40u);  // vendor range 2
  EXPECT_EQ(data_offset(0x04), 24u);  // PerfMgt: no class header
  EXPECT_FALSE(rmpp_class(0x81)) << "directed-route SMPs never use RMPP";
}

}  // namespace
}  // namespace ibat::umad_twin
