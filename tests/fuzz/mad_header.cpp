// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_mad_header on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/mad_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto header = ibat::mad::decode_mad_header(bytes);
  if (!header) return 0;
  std::array<std::uint8_t, ibat::mad::kMadHeaderSize> out{};
  ibat::mad::encode_mad_header(*header, out);
  auto again = ibat::mad::decode_mad_header(out);
  if (!again || !(*again == *header)) __builtin_trap();
  return 0;
}
