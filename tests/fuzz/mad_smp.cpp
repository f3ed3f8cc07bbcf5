// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_smp on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/smp.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto smp = ibat::mad::decode_smp(bytes);
  if (!smp) return 0;
  auto again = ibat::mad::decode_smp(ibat::mad::encode_smp(smp->header, smp->data));
  if (!again || !(again->header == smp->header) || again->data != smp->data) __builtin_trap();
  return 0;
}
