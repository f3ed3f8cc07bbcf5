// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Native protocol v1 frame layer (docs/protocol.md "Frames"): the 12-byte header, op and status
// codes, and helpers that append whole frames to an output buffer. Pure codec, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace ibat::protocol {

inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kHeaderSize = 12;
// Bytes of the length field itself; `length` counts what follows it.
inline constexpr std::size_t kLengthFieldSize = 4;
inline constexpr std::size_t kMaxPayload = 65536;
inline constexpr std::size_t kMaxFrame = kHeaderSize + kMaxPayload;

inline constexpr std::uint8_t kReplyBit = 0x80;
inline constexpr std::uint8_t kFlagMore = 0x01;

enum class Op : std::uint8_t {
  resolve = 1,
  neigh_add = 2,
  neigh_del = 3,
  neigh_list = 4,
  paths = 5,
  stats = 6,
  flush = 7,
  watch = 8,
  cancel = 9,
  table_hits = 10,
  error = 0xFF,
};
std::string_view to_string(Op op);
// The op of a request byte, if it names a known request op (1..10).
std::optional<Op> request_op(std::uint8_t raw);
constexpr std::uint8_t reply_op(Op op) {
  return op == Op::error ? 0xFF : static_cast<std::uint8_t>(static_cast<std::uint8_t>(op) | kReplyBit);
}

enum class Status : std::uint8_t {
  ok = 0,
  timeout = 1,
  unreachable = 2,
  no_record = 3,
  overloaded = 4,
  cancelled = 5,
  invalid = 6,
  denied = 7,
  malformed = 8,
  unsupported = 9,
};
inline constexpr std::uint8_t kMaxStatus = 9;
std::string_view to_string(Status s);
// Codes 0..6 are core::Error in the same order.
Status status_from_error(core::Error e);
std::optional<core::Error> error_from_status(Status s);

struct FrameHeader {
  std::uint8_t version = kVersion;
  std::uint8_t op = 0;  // raw: a request op, a reply op (op | 0x80) or 0xFF
  Status status = Status::ok;
  std::uint8_t flags = 0;
  std::uint32_t id = 0;
  std::uint32_t payload_size = 0;

  bool more() const { return (flags & kFlagMore) != 0; }
};

// Reads the 12 header bytes. Checks nothing beyond the byte count; FrameSplitter validates.
FrameHeader decode_header(std::span<const std::uint8_t, kHeaderSize> bytes);

// Appends one frame (header + payload) to `out`. payload.size() must be <= kMaxPayload.
void append_frame(std::vector<std::uint8_t>& out, const FrameHeader& header,
                  std::span<const std::uint8_t> payload);

// Starts a frame in `out` with a placeholder length; payload bytes are then appended to `out`
// and finish_frame() patches the length. Used by the payload encoders to avoid a copy.
std::size_t begin_frame(std::vector<std::uint8_t>& out, std::uint8_t op, Status status,
                        std::uint8_t flags, std::uint32_t id);
void finish_frame(std::vector<std::uint8_t>& out, std::size_t frame_start);

// Appends an ERROR frame (op 0xFF) carrying `message` (cut to kMaxPayload bytes).
void append_error(std::vector<std::uint8_t>& out, std::uint32_t id, Status status,
                  std::string_view message);

// Appends a reply body of any size as frames of at most kMaxPayload bytes, MORE on all but the
// last (an empty body is one empty frame). Used for JSON listings.
void append_chunked_reply(std::vector<std::uint8_t>& out, Op op, std::uint32_t id,
                          std::string_view body);

}  // namespace ibat::protocol
