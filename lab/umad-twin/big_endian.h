// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Big-endian fields of MADs and SMP attributes, as the wire carries them: the one reader and
// writer the twin's files share (the twin does not link src/wire, which is ibatd's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ibat::umad_twin {

inline std::uint64_t get_bytes(const std::uint8_t* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}
inline std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>(get_bytes(p, 2)); }
inline std::uint32_t get32(const std::uint8_t* p) { return static_cast<std::uint32_t>(get_bytes(p, 4)); }
inline std::uint64_t get64(const std::uint8_t* p) { return get_bytes(p, 8); }

// The same at byte `at` of a MAD or an attribute.
inline std::uint16_t get16(std::span<const std::uint8_t> b, std::size_t at) { return get16(b.subspan(at, 2).data()); }
inline std::uint32_t get32(std::span<const std::uint8_t> b, std::size_t at) { return get32(b.subspan(at, 4).data()); }
inline std::uint64_t get64(std::span<const std::uint8_t> b, std::size_t at) { return get64(b.subspan(at, 8).data()); }
inline void put32(std::span<std::uint8_t> b, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

}  // namespace ibat::umad_twin
