// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Frame header codec and frame builders of the native protocol (docs/protocol.md "Frames").
#include "protocol/frame.h"

#include "protocol/wire.h"

namespace ibat::protocol {

std::string_view to_string(Op op) {
  switch (op) {
    case Op::resolve: return "RESOLVE";
    case Op::neigh_add: return "NEIGH_ADD";
    case Op::neigh_del: return "NEIGH_DEL";
    case Op::neigh_list: return "NEIGH_LIST";
    case Op::paths: return "PATHS";
    case Op::stats: return "STATS";
    case Op::flush: return "FLUSH";
    case Op::watch: return "WATCH";
    case Op::cancel: return "CANCEL";
    case Op::table_hits: return "TABLE_HITS";
    case Op::error: return "ERROR";
  }
  return "UNKNOWN";
}

std::optional<Op> request_op(std::uint8_t raw) {
  if (raw >= static_cast<std::uint8_t>(Op::resolve) && raw <= static_cast<std::uint8_t>(Op::table_hits))
    return static_cast<Op>(raw);
  return std::nullopt;
}

std::string_view to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::timeout: return "timeout";
    case Status::unreachable: return "unreachable";
    case Status::no_record: return "no-record";
    case Status::overloaded: return "overloaded";
    case Status::cancelled: return "cancelled";
    case Status::invalid: return "invalid";
    case Status::denied: return "denied";
    case Status::malformed: return "malformed";
    case Status::unsupported: return "unsupported";
  }
  return "unknown";
}

Status status_from_error(core::Error e) { return static_cast<Status>(static_cast<std::uint8_t>(e)); }

std::optional<core::Error> error_from_status(Status s) {
  if (static_cast<std::uint8_t>(s) > static_cast<std::uint8_t>(core::Error::invalid)) return std::nullopt;
  return static_cast<core::Error>(static_cast<std::uint8_t>(s));
}

FrameHeader decode_header(std::span<const std::uint8_t, kHeaderSize> bytes) {
  WireReader r{bytes};
  FrameHeader h;
  std::uint32_t length = r.u32();
  h.version = r.u8();
  h.op = r.u8();
  h.status = static_cast<Status>(r.u8());
  h.flags = r.u8();
  h.id = r.u32();
  // `length` counts the 8 header bytes after it; a smaller value is rejected by the splitter.
  h.payload_size = length >= kHeaderSize - kLengthFieldSize
                       ? length - static_cast<std::uint32_t>(kHeaderSize - kLengthFieldSize)
                       : 0;
  return h;
}

std::size_t begin_frame(std::vector<std::uint8_t>& out, std::uint8_t op, Status status,
                        std::uint8_t flags, std::uint32_t id) {
  std::size_t start = out.size();
  WireWriter w{out};
  w.u32(0);  // length, patched by finish_frame
  w.u8(kVersion);
  w.u8(op);
  w.u8(static_cast<std::uint8_t>(status));
  w.u8(flags);
  w.u32(id);
  return start;
}

void finish_frame(std::vector<std::uint8_t>& out, std::size_t frame_start) {
  auto length = static_cast<std::uint32_t>(out.size() - frame_start - kLengthFieldSize);
  for (std::size_t i = 0; i < kLengthFieldSize; ++i)
    out[frame_start + i] = static_cast<std::uint8_t>(length >> (24 - 8 * i));
}

void append_frame(std::vector<std::uint8_t>& out, const FrameHeader& header,
                  std::span<const std::uint8_t> payload) {
  std::size_t start = begin_frame(out, header.op, header.status, header.flags, header.id);
  out[start + kLengthFieldSize] = header.version;
  out.insert(out.end(), payload.begin(), payload.end());
  finish_frame(out, start);
}

void append_error(std::vector<std::uint8_t>& out, std::uint32_t id, Status status,
                  std::string_view message) {
  std::size_t start = begin_frame(out, reply_op(Op::error), status, 0, id);
  std::string_view cut = message.substr(0, kMaxPayload);
  out.insert(out.end(), cut.begin(), cut.end());
  finish_frame(out, start);
}

void append_chunked_reply(std::vector<std::uint8_t>& out, Op op, std::uint32_t id,
                          std::string_view body) {
  do {
    std::string_view chunk = body.substr(0, kMaxPayload);
    body.remove_prefix(chunk.size());
    std::uint8_t flags = body.empty() ? 0 : kFlagMore;
    std::size_t start = begin_frame(out, reply_op(op), Status::ok, flags, id);
    out.insert(out.end(), chunk.begin(), chunk.end());
    finish_frame(out, start);
  } while (!body.empty());
}

}  // namespace ibat::protocol
