// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RMPP wire format of the lab's MAD layer twin: messages of 1 to N segments cut (and joined back)
// as the kernel does, the ACK and ABORT MADs, the class headers.
#include "rmpp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "rmpp_window.h"

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

Bytes join(Reassembler& r, const std::vector<Bytes>& segments) {
  Reassembler::Result last;
  for (const Bytes& s : segments) last = r.add({5, 1}, s, RmppClock::time_point{});
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

TEST(Rmpp, AnAckOrAbortAnswersTheWayTheDataCame) {
  const auto data = segment(sa_message(600));
  const Bytes ack = control_mad(data[1], kRmppTypeAck, 0, 2, 66);
  ASSERT_EQ(ack.size(), kMadBytes);
  EXPECT_EQ(method(ack), 0x12) << "GetTableResp acknowledged by a GetTable-method MAD";
  EXPECT_EQ(tid(ack), tid(data[1]));
  EXPECT_TRUE(rmpp_active(ack));
  EXPECT_EQ(rmpp_version(ack), kRmppVersion);
  EXPECT_EQ(rmpp_type(ack), kRmppTypeAck);
  EXPECT_EQ(rmpp_flags(ack), kRmppFlagActive) << "no FIRST, no LAST";
  EXPECT_EQ(ack[26] & 0xf8, 0x70) << "RRespTime kept";
  EXPECT_EQ(segment_number(ack), 2u);
  EXPECT_EQ(payload_length(ack), 66u) << "NewWindowLast";
  EXPECT_TRUE(std::equal(ack.begin() + 36, ack.begin() + 56, data[1].begin() + 36)) << "the SA header";
  EXPECT_TRUE(std::all_of(ack.begin() + 56, ack.end(), [](std::uint8_t b) { return b == 0; })) << "no data";
  const Bytes abort = control_mad(ack, kRmppTypeAbort, kRmppStatusSegmentTooBig);
  EXPECT_EQ(method(abort), 0x92) << "an ABORT of the ACK goes back to the data's receiver";
  EXPECT_EQ(rmpp_status(abort), kRmppStatusSegmentTooBig);
  EXPECT_EQ(segment_number(abort), 0u);
  EXPECT_EQ(payload_length(abort), 0u);
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
