// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_sa_mad and first_record on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/sa_mad.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto mad = ibat::mad::decode_sa_mad(bytes);
  if (!mad) return 0;
  auto record = ibat::mad::first_record(*mad);
  if (record && record->size() > mad->data.size()) __builtin_trap();
  const auto rebuilt = ibat::mad::build_sa_mad(mad->header, mad->sa, mad->data);
  auto again = ibat::mad::decode_sa_mad(rebuilt);
  if (!again || !(again->header == mad->header) || !(again->sa == mad->sa)) __builtin_trap();
  return 0;
}
