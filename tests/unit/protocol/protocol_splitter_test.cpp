// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The incremental frame splitter: any chunking of a valid stream yields the same frames, and bad
// lengths or versions are rejected from the header alone.
#include <gtest/gtest.h>

#include "protocol/frame_splitter.h"

namespace ibat::protocol {
namespace {

struct Seen {
  std::uint8_t op;
  std::uint32_t id;
  std::vector<std::uint8_t> payload;
  bool operator==(const Seen&) const = default;
};

std::vector<std::uint8_t> three_frames() {
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> big(1000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  append_frame(out, FrameHeader{kVersion, 1, Status::ok, 0, 10, 0}, big);
  append_frame(out, FrameHeader{kVersion, 6, Status::ok, 0, 11, 0}, {});
  const std::uint8_t small[] = {1, 2, 3};
  append_frame(out, FrameHeader{kVersion, 9, Status::ok, 0, 12, 0}, small);
  return out;
}

std::vector<Seen> split_in_chunks(const std::vector<std::uint8_t>& stream, std::size_t chunk) {
  FrameSplitter splitter;
  std::vector<Seen> seen;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    std::span<const std::uint8_t> part(stream.data() + at, std::min(chunk, stream.size() - at));
    auto err = splitter.feed(part, [&](const FrameHeader& h, std::span<const std::uint8_t> p) {
      seen.push_back(Seen{h.op, h.id, {p.begin(), p.end()}});
    });
    EXPECT_FALSE(err) << err->message;
  }
  EXPECT_TRUE(splitter.idle());
  return seen;
}

TEST(Splitter, EveryChunkSizeYieldsTheSameFrames) {
  auto stream = three_frames();
  auto whole = split_in_chunks(stream, stream.size());
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0].payload.size(), 1000u);
  EXPECT_EQ(whole[1].id, 11u);
  EXPECT_TRUE(whole[1].payload.empty());
  EXPECT_EQ(whole[2].payload, (std::vector<std::uint8_t>{1, 2, 3}));
  for (std::size_t chunk : {1u, 2u, 5u, 11u, 12u, 13u, 999u, 1013u})
    EXPECT_EQ(split_in_chunks(stream, chunk), whole) << "chunk " << chunk;
}

TEST(Splitter, EveryTruncationIsIncompleteNotAnError) {
  auto stream = three_frames();
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    FrameSplitter splitter;
    int frames = 0;
    auto err = splitter.feed(std::span(stream.data(), cut), [&](auto&, auto) { ++frames; });
    EXPECT_FALSE(err);
    bool on_boundary = cut == 0 || cut == 1012 || cut == 1024;
    EXPECT_EQ(splitter.idle(), on_boundary) << "cut " << cut;
    EXPECT_EQ(frames, cut >= 1024 ? 2 : cut >= 1012 ? 1 : 0) << "cut " << cut;
  }
}

std::vector<std::uint8_t> header_bytes(std::uint32_t length, std::uint8_t version, std::uint32_t id) {
  return {static_cast<std::uint8_t>(length >> 24), static_cast<std::uint8_t>(length >> 16),
          static_cast<std::uint8_t>(length >> 8),  static_cast<std::uint8_t>(length),
          version, 1, 0, 0,
          static_cast<std::uint8_t>(id >> 24), static_cast<std::uint8_t>(id >> 16),
          static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id)};
}

TEST(Splitter, LengthBelowHeaderIsMalformed) {
  for (std::uint32_t length : {0u, 1u, 7u}) {
    FrameSplitter splitter;
    auto err = splitter.feed(header_bytes(length, kVersion, 5), [](auto&, auto) { FAIL(); });
    ASSERT_TRUE(err);
    EXPECT_EQ(err->status, Status::malformed);
    EXPECT_EQ(err->id, 5u);
    EXPECT_NE(err->message.find("length " + std::to_string(length)), std::string::npos) << err->message;
  }
}

TEST(Splitter, LengthAboveMaxIsMalformedBeforeAnyPayloadArrives) {
  FrameSplitter splitter;
  auto err = splitter.feed(header_bytes(kMaxPayload + 9, kVersion, 1), [](auto&, auto) { FAIL(); });
  ASSERT_TRUE(err);
  EXPECT_EQ(err->status, Status::malformed);
  EXPECT_NE(err->message.find("65545"), std::string::npos) << err->message;
  // The largest allowed frame still passes.
  std::vector<std::uint8_t> max = header_bytes(kMaxPayload + 8, kVersion, 2);
  max.resize(kMaxFrame, 0x5A);
  FrameSplitter ok;
  std::size_t got = 0;
  EXPECT_FALSE(ok.feed(max, [&](auto&, std::span<const std::uint8_t> p) { got = p.size(); }));
  EXPECT_EQ(got, kMaxPayload);
}

TEST(Splitter, UnknownVersionIsUnsupported) {
  for (int version : {0, 2, 255}) {
    FrameSplitter splitter;
    auto err = splitter.feed(header_bytes(8, static_cast<std::uint8_t>(version), 9), [](auto&, auto) { FAIL(); });
    ASSERT_TRUE(err);
    EXPECT_EQ(err->status, Status::unsupported);
    EXPECT_EQ(err->id, 9u);
  }
}

TEST(Splitter, ErrorIsStickyAndFramesBeforeItAreDelivered) {
  std::vector<std::uint8_t> stream;
  append_frame(stream, FrameHeader{kVersion, 6, Status::ok, 0, 1, 0}, {});
  auto bad = header_bytes(3, kVersion, 2);
  stream.insert(stream.end(), bad.begin(), bad.end());
  FrameSplitter splitter;
  int frames = 0;
  auto err = splitter.feed(stream, [&](auto&, auto) { ++frames; });
  EXPECT_EQ(frames, 1);
  ASSERT_TRUE(err);
  std::vector<std::uint8_t> good;
  append_frame(good, FrameHeader{kVersion, 6, Status::ok, 0, 3, 0}, {});
  auto again = splitter.feed(good, [&](auto&, auto) { ++frames; });
  ASSERT_TRUE(again);
  EXPECT_EQ(again->message, err->message);
  EXPECT_EQ(frames, 1);
}

}  // namespace
}  // namespace ibat::protocol
