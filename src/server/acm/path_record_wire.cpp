// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibv_path_record codec (see path_record_wire.h): mad's SA PathRecord codec, without raw_traffic.
#include "server/acm/path_record_wire.h"

#include <algorithm>

#include "mad/path_record.h"

namespace ibat::acm {

core::PathRecord decode_path_record(std::span<const std::uint8_t, 64> bytes) {
  core::PathRecord p = mad::decode_path_record(bytes).value();  // 64 bytes: cannot be short
  p.raw_traffic = false;
  return p;
}

void encode_path_record(const core::PathRecord& path, std::span<std::uint8_t, 64> out) {
  core::PathRecord p = path;
  p.raw_traffic = false;  // a reserved bit in ibv_path_record
  const auto bytes = mad::encode_path_record(p);
  std::copy(bytes.begin(), bytes.end(), out.begin());
}

}  // namespace ibat::acm
