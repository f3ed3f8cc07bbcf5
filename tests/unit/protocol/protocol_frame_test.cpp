// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Frame header layout, op/status mapping and the frame builders of the native protocol.
#include <gtest/gtest.h>

#include "protocol/frame.h"
#include "protocol/frame_splitter.h"

namespace ibat::protocol {
namespace {

std::span<const std::uint8_t, kHeaderSize> header_of(const std::vector<std::uint8_t>& bytes) {
  return std::span<const std::uint8_t, kHeaderSize>(bytes.data(), kHeaderSize);
}

TEST(Frame, HeaderLayoutIsBigEndianAsDocumented) {
  std::vector<std::uint8_t> out;
  const std::uint8_t payload[] = {0xAA, 0xBB, 0xCC};
  append_frame(out, FrameHeader{kVersion, 0x81, Status::no_record, kFlagMore, 0x01020304, 3}, payload);
  const std::vector<std::uint8_t> expected = {0, 0, 0, 11, 1, 0x81, 3, 1, 1, 2, 3, 4, 0xAA, 0xBB, 0xCC};
  EXPECT_EQ(out, expected);
  FrameHeader h = decode_header(header_of(out));
  EXPECT_EQ(h.version, kVersion);
  EXPECT_EQ(h.op, 0x81);
  EXPECT_EQ(h.status, Status::no_record);
  EXPECT_TRUE(h.more());
  EXPECT_EQ(h.id, 0x01020304u);
  EXPECT_EQ(h.payload_size, 3u);
}

TEST(Frame, ReplyOpSetsTopBitExceptError) {
  EXPECT_EQ(reply_op(Op::resolve), 0x81);
  EXPECT_EQ(reply_op(Op::cancel), 0x89);
  EXPECT_EQ(reply_op(Op::error), 0xFF);
}

TEST(Frame, RequestOpAcceptsOnlyKnownRequestOps) {
  EXPECT_FALSE(request_op(0));
  EXPECT_EQ(request_op(1), Op::resolve);
  EXPECT_EQ(request_op(9), Op::cancel);
  EXPECT_EQ(request_op(10), Op::table_hits);
  EXPECT_FALSE(request_op(11));
  EXPECT_FALSE(request_op(0x81));
  EXPECT_FALSE(request_op(0xFF));
}

TEST(Frame, StatusCodesMatchCoreErrorsInOrder) {
  for (auto e : {core::Error::ok, core::Error::timeout, core::Error::unreachable, core::Error::no_record,
                 core::Error::overloaded, core::Error::cancelled, core::Error::invalid}) {
    Status s = status_from_error(e);
    EXPECT_EQ(error_from_status(s), e);
    EXPECT_EQ(to_string(s), core::to_string(e));
  }
  EXPECT_FALSE(error_from_status(Status::denied));
  EXPECT_FALSE(error_from_status(Status::malformed));
  EXPECT_FALSE(error_from_status(Status::unsupported));
}

TEST(Frame, ErrorFrameCarriesMessageAndIsCutToMaxPayload) {
  std::vector<std::uint8_t> out;
  append_error(out, 7, Status::malformed, "bad length");
  FrameHeader h = decode_header(header_of(out));
  EXPECT_EQ(h.op, 0xFF);
  EXPECT_EQ(h.status, Status::malformed);
  EXPECT_EQ(h.id, 7u);
  EXPECT_EQ(std::string(out.begin() + kHeaderSize, out.end()), "bad length");

  out.clear();
  append_error(out, 1, Status::malformed, std::string(kMaxPayload + 100, 'x'));
  EXPECT_EQ(decode_header(header_of(out)).payload_size, kMaxPayload);
}

TEST(Frame, ChunkedReplySetsMoreOnAllButLastAndReassembles) {
  std::string body(2 * kMaxPayload + 10, 'a');
  body[kMaxPayload] = 'b';
  std::vector<std::uint8_t> out;
  append_chunked_reply(out, Op::paths, 42, body);
  FrameSplitter splitter;
  std::string joined;
  std::vector<bool> more;
  auto err = splitter.feed(out, [&](const FrameHeader& h, std::span<const std::uint8_t> p) {
    EXPECT_EQ(h.op, reply_op(Op::paths));
    EXPECT_EQ(h.id, 42u);
    more.push_back(h.more());
    joined.append(p.begin(), p.end());
  });
  EXPECT_FALSE(err);
  EXPECT_EQ(more, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(joined, body);
}

TEST(Frame, EmptyChunkedReplyIsOneEmptyFinalFrame) {
  std::vector<std::uint8_t> out;
  append_chunked_reply(out, Op::neigh_list, 3, "");
  ASSERT_EQ(out.size(), kHeaderSize);
  FrameHeader h = decode_header(header_of(out));
  EXPECT_FALSE(h.more());
  EXPECT_EQ(h.payload_size, 0u);
}

}  // namespace
}  // namespace ibat::protocol
