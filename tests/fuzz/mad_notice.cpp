// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libFuzzer target: decode_report and decode_notice on arbitrary bytes must return a value or an error without
// reading out of bounds, and whatever decodes must come back unchanged through encode + decode.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "mad/notice.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  auto notice = ibat::mad::decode_notice(bytes);
  if (notice) {
    auto again = ibat::mad::decode_notice(ibat::mad::encode_notice(*notice));
    if (!again || !(*again == *notice)) __builtin_trap();
  }
  auto report = ibat::mad::decode_report(bytes);
  if (!report) return 0;
  const auto resp = ibat::mad::build_report_resp(*report);
  auto echoed = ibat::mad::decode_sa_mad(resp);
  if (!echoed || echoed->header.tid != report->header.tid) __builtin_trap();
  return 0;
}
