// Fuzzes the twin's RMPP reassembler: the input is a stream of 256-byte segments (each preceded by
// one byte choosing its source LID); whatever they say, a completed message is no longer than the
// bound and every segment is judged without reading past it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rmpp.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using ibat::umad_twin::Reassembler;
  constexpr std::size_t kBound = 64 * 1024;
  Reassembler r(kBound);
  std::span<const std::uint8_t> in(data, size);
  while (!in.empty()) {
    const std::uint16_t lid = in[0] & 3;
    in = in.subspan(1);
    const std::size_t take = std::min<std::size_t>(in.size(), 256);
    const auto result = r.add(lid, in.first(take));
    if (result.kind == Reassembler::Result::Kind::complete && result.message.size() > kBound) __builtin_trap();
    in = in.subspan(take);
  }
  // And the sender: any message cut into segments joins back to itself.
  if (size >= 56) {
    std::vector<std::uint8_t> message(data, data + size);
    message[1] = 0x03;
    message[26] |= 1;
    Reassembler back;
    Reassembler::Result last;
    for (const auto& seg : ibat::umad_twin::segment(message)) last = back.add(1, seg);
    if ((last.kind != Reassembler::Result::Kind::complete || last.message.size() != message.size())) __builtin_trap();
  }
  return 0;
}
