// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the twin's RMPP protocol. The receiver: the input is a stream of 256-byte segments (each
// preceded by one byte choosing its source LID and how far the clock moves); whatever they say, a
// completed message is no longer than the bound, every answer is one ACK, STOP or ABORT MAD, and
// every segment is judged without reading past it. The sender: the same bytes read as ACKs and
// timeouts never make it send a segment outside 1..n or past the window it was granted. And any
// message cut into segments joins back to itself.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "rmpp.h"
#include "rmpp_window.h"

namespace {

using namespace ibat::umad_twin;

void check_control(const Bytes& mad) {
  if (mad.empty()) return;
  const bool active = (rmpp_flags(mad) & kRmppFlagActive) != 0;
  if (mad.size() != kMadBytes || !active || rmpp_type(mad) < kRmppTypeAck || rmpp_type(mad) > kRmppTypeAbort) __builtin_trap();
}

void fuzz_receiver(std::span<const std::uint8_t> in) {
  constexpr std::size_t kBound = 64 * 1024;
  Reassembler r(kBound, 4);  // a small window, so that streams reach its end
  RmppClock::time_point now{};
  while (!in.empty()) {
    const std::uint8_t control = in[0];
    in = in.subspan(1);
    const Reassembler::Source source{static_cast<std::uint16_t>(control & 3), 1};
    now += std::chrono::seconds(control >> 4);
    const auto seg = in.first(std::min<std::size_t>(in.size(), kMadBytes));
    in = in.subspan(seg.size());
    if (seg.size() == kMadBytes && rmpp_fault(seg)) continue;  // the MAD layer ABORTs these itself
    const auto result = r.add(source, seg, now);
    if (result.kind == Reassembler::Result::Kind::complete && result.message.size() > kBound) __builtin_trap();
    check_control(result.reply);
    for (const auto& expired : r.expire(now)) check_control(expired.abort);
  }
}

void fuzz_sender(std::span<const std::uint8_t> in) {
  if (in.empty()) return;
  const std::uint32_t segments = 1u + in[0] % 200u;
  RmppSender s(segments, 3);
  std::uint32_t granted = s.window_last();
  const auto check = [&](RmppSender::Burst b) {
    if (!b.empty() && (b.first < 1 || b.last > segments || b.last > granted)) __builtin_trap();
  };
  check(s.start());
  for (std::size_t i = 1; i + 2 < in.size(); i += 3) {
    if (in[i] & 0x80) {
      if (const auto resend = s.on_timeout()) check(*resend);
      continue;
    }
    const RmppSender::Reaction r = s.on_ack(in[i + 1], in[i + 2], in[i] & 0x01);
    granted = s.window_last();
    check(r.send);
    if (r.ended) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  fuzz_receiver(in);
  fuzz_sender(in);
  if (size >= 56) {
    Bytes message(data, data + size);
    message[1] = 0x03;
    message[26] |= 1;
    Reassembler back;
    Reassembler::Result last;
    for (const auto& seg : segment(message)) last = back.add({1, 1}, seg, RmppClock::time_point{});
    if (last.kind != Reassembler::Result::Kind::complete || last.message.size() != message.size()) __builtin_trap();
  }
  return 0;
}
