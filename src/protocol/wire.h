// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Sequential byte writer and bounds-checked reader used by every payload codec of the native
// protocol, over the shared big-endian helpers (wire/byte_order.h). The reader never reads past
// its span: a short read sets a sticky failure instead.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wire/byte_order.h"

namespace ibat::protocol {

class WireWriter {
 public:
  explicit WireWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { wire::put16(grow(2), 0, v); }
  void u32(std::uint32_t v) { wire::put32(grow(4), 0, v); }
  void u64(std::uint64_t v) { wire::put64(grow(8), 0, v); }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void zeros(std::size_t n) { out_.insert(out_.end(), n, 0); }

 private:
  std::span<std::uint8_t> grow(std::size_t n) {
    out_.resize(out_.size() + n);
    return std::span(out_).last(n);
  }

  std::vector<std::uint8_t>& out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::uint8_t> in) : in_(in) {}
  std::size_t remaining() const { return in_.size() - pos_; }
  // True while every read so far had enough bytes.
  bool ok() const { return ok_; }

  std::uint8_t u8() { return take(1) ? in_[pos_ - 1] : 0; }
  std::uint16_t u16() { return take(2) ? wire::get16(in_, pos_ - 2) : 0; }
  std::uint32_t u32() { return take(4) ? wire::get32(in_, pos_ - 4) : 0; }
  std::uint64_t u64() { return take(8) ? wire::get64(in_, pos_ - 8) : 0; }
  template <std::size_t N>
  std::array<std::uint8_t, N> array() {
    std::array<std::uint8_t, N> out{};
    if (take(N))
      for (std::size_t i = 0; i < N; ++i) out[i] = in_[pos_ - N + i];
    return out;
  }

 private:
  bool take(std::size_t n) {
    if (!ok_ || remaining() < n) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace ibat::protocol
