// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_path_record on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/path_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto record = ibat::mad::decode_path_record(bytes);
  if (!record) return 0;
  auto again = ibat::mad::decode_path_record(ibat::mad::encode_path_record(*record));
  if (!again || !(*again == *record)) __builtin_trap();
  return 0;
}
