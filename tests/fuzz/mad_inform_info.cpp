// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_inform_info on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/inform_info.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto info = ibat::mad::decode_inform_info(bytes);
  if (!info) return 0;
  auto again = ibat::mad::decode_inform_info(ibat::mad::encode_inform_info(*info));
  if (!again || !(*again == *info)) __builtin_trap();
  return 0;
}
