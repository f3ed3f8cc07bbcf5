// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: arbitrary bytes as a native protocol stream. The first byte picks the read
// chunk size; every frame the splitter yields goes to the decoder of its op, and whatever decodes
// must re-encode to the same payload (decoders accept only canonical encodings).
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "protocol/frame_splitter.h"
#include "protocol/messages.h"

namespace {

using namespace ibat::protocol;

std::vector<std::uint8_t> payload_of(const std::vector<std::uint8_t>& frame) {
  return {frame.begin() + kHeaderSize, frame.end()};
}

void require_same(const std::vector<std::uint8_t>& frame, std::span<const std::uint8_t> payload) {
  auto again = payload_of(frame);
  if (!std::equal(again.begin(), again.end(), payload.begin(), payload.end())) std::abort();
}

void check_request(Op op, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> out;
  switch (op) {
    case Op::resolve:
      if (auto d = decode_resolve_request(payload)) {
        append_resolve_request(out, 1, d.value());
        // Reserved/absent fields (sgid or pkey without their flag) are not preserved: compare decoded.
        auto again = decode_resolve_request(payload_of(out));
        if (!again || again.value().target != d.value().target || again.value().sgid != d.value().sgid ||
            again.value().pkey != d.value().pkey || again.value().timeout != d.value().timeout)
          std::abort();
      }
      break;
    case Op::neigh_add:
      if (auto d = decode_neigh_add(payload)) {
        append_neigh_add(out, 1, d.value());
        auto again = decode_neigh_add(payload_of(out));
        if (!again || !(again.value() == d.value())) std::abort();
      }
      break;
    case Op::neigh_del:
      if (auto d = decode_neigh_del(payload)) {
        append_neigh_del(out, 1, d.value());
        auto again = decode_neigh_del(payload_of(out));
        if (!again || !(again.value() == d.value())) std::abort();
      }
      break;
    case Op::flush:
      if (auto d = decode_flush(payload)) {
        append_flush(out, 1, d.value());
        require_same(out, payload);
      }
      break;
    case Op::cancel:
      if (auto d = decode_cancel(payload)) {
        append_cancel(out, 1, d.value());
        require_same(out, payload);
      }
      break;
    case Op::table_hits:
      if (auto d = decode_table_hits(payload)) {
        append_table_hits(out, 1, d.value());
        require_same(out, payload);
      }
      break;
    case Op::paths:
      if (auto d = decode_paths_request(payload); d && !payload.empty()) {
        append_paths_request(out, 1, d.value());
        require_same(out, payload);
      }
      break;
    case Op::neigh_list:
    case Op::stats:
    case Op::watch:
      (void)decode_empty(op, payload);
      break;
    case Op::error:
      break;
  }
}

void check_frame(const FrameHeader& h, std::span<const std::uint8_t> payload) {
  if (auto op = request_op(h.op)) return check_request(*op, payload);
  if (h.op == reply_op(Op::paths)) (void)decode_paths_reply(payload);  // one chunk of a page
  if (h.op == reply_op(Op::resolve)) {
    if (auto d = decode_resolve_reply(h.status, payload)) {
      std::vector<std::uint8_t> out;
      append_resolve_reply(out, h.id, d.value());
      auto again = decode_resolve_reply(h.status, payload_of(out));
      if (!again || !(again.value().path == d.value().path) || again.value().state != d.value().state ||
          again.value().age != d.value().age)
        std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = data[0] == 0 ? size : data[0];
  std::span<const std::uint8_t> stream(data + 1, size - 1);
  FrameSplitter splitter;
  while (!stream.empty()) {
    auto part = stream.first(std::min(chunk, stream.size()));
    stream = stream.subspan(part.size());
    if (splitter.feed(part, check_frame)) break;
  }
  return 0;
}
