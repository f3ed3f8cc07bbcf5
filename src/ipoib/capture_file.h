// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Loads a capture file into memory for the pcap reader, refusing files above a size cap so that
// `ibat neigh replay` cannot be made to allocate without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ipoib/decode_error.h"

namespace ibat::ipoib {

inline constexpr std::size_t kMaxCaptureFileBytes = 64u << 20;

std::variant<std::vector<std::uint8_t>, DecodeError> read_capture_file(const std::string& path,
                                                                      std::size_t max_bytes = kMaxCaptureFileBytes);

}  // namespace ibat::ipoib
