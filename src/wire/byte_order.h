// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Big-endian (network byte order) field access at an offset of a byte buffer: the one set of
// helpers every codec uses (mad/, ipoib/, protocol/, server/acm/, the snapshot, the umad transport).
// Callers check the buffer length once per structure; these helpers then index within it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/types.h"

namespace ibat::wire {

inline std::uint16_t get16(std::span<const std::uint8_t> b, std::size_t off) {
  return static_cast<std::uint16_t>((b[off] << 8) | b[off + 1]);
}
inline std::uint32_t get24(std::span<const std::uint8_t> b, std::size_t off) {
  return (std::uint32_t{b[off]} << 16) | (std::uint32_t{b[off + 1]} << 8) | b[off + 2];
}
inline std::uint32_t get32(std::span<const std::uint8_t> b, std::size_t off) {
  return (std::uint32_t{get16(b, off)} << 16) | get16(b, off + 2);
}
inline std::uint64_t get64(std::span<const std::uint8_t> b, std::size_t off) {
  return (std::uint64_t{get32(b, off)} << 32) | get32(b, off + 4);
}
inline core::Gid get_gid(std::span<const std::uint8_t> b, std::size_t off) {
  core::Gid gid;
  for (std::size_t i = 0; i < gid.raw.size(); ++i) gid.raw[i] = b[off + i];
  return gid;
}

inline void put8(std::span<std::uint8_t> b, std::size_t off, std::uint32_t v) {
  b[off] = static_cast<std::uint8_t>(v & 0xFF);
}
inline void put16(std::span<std::uint8_t> b, std::size_t off, std::uint32_t v) {
  put8(b, off, v >> 8);
  put8(b, off + 1, v);
}
inline void put24(std::span<std::uint8_t> b, std::size_t off, std::uint32_t v) {
  put8(b, off, v >> 16);
  put16(b, off + 1, v);
}
inline void put32(std::span<std::uint8_t> b, std::size_t off, std::uint32_t v) {
  put16(b, off, v >> 16);
  put16(b, off + 2, v);
}
inline void put64(std::span<std::uint8_t> b, std::size_t off, std::uint64_t v) {
  put32(b, off, static_cast<std::uint32_t>(v >> 32));
  put32(b, off + 4, static_cast<std::uint32_t>(v));
}
inline void put_gid(std::span<std::uint8_t> b, std::size_t off, const core::Gid& gid) {
  for (std::size_t i = 0; i < gid.raw.size(); ++i) b[off + i] = gid.raw[i];
}

// Low `bits` bits of v, as a byte (for packing sub-byte fields).
constexpr std::uint8_t bits8(std::uint32_t v, unsigned bits) {
  return static_cast<std::uint8_t>(v & ((1U << bits) - 1U));
}

}  // namespace ibat::wire
