// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Incremental frame splitter (see frame_splitter.h): header validation and reassembly of frames
// that arrive split across reads. Whole frames found in the input are passed on without a copy.
#include "protocol/frame_splitter.h"

#include <algorithm>

#include "wire/byte_order.h"

namespace ibat::protocol {

bool FrameSplitter::accept_header() {
  std::uint32_t length = wire::get32(header_bytes_, 0);
  header_ = decode_header(header_bytes_);
  constexpr std::uint32_t min_length = kHeaderSize - kLengthFieldSize;
  constexpr std::uint32_t max_length = kMaxFrame - kLengthFieldSize;
  if (length < min_length || length > max_length) {
    error_ = SplitError{Status::malformed, header_.id,
                        "frame length " + std::to_string(length) + " out of range (" +
                            std::to_string(min_length) + ".." + std::to_string(max_length) + ")"};
    return false;
  }
  if (header_.version != kVersion) {
    error_ = SplitError{Status::unsupported, header_.id,
                        "protocol version " + std::to_string(header_.version) +
                            " not supported (this side speaks version " + std::to_string(kVersion) + ")"};
    return false;
  }
  return true;
}

std::size_t FrameSplitter::step(std::span<const std::uint8_t> input) {
  std::size_t used = 0;
  if (header_have_ < kHeaderSize) {
    std::size_t n = std::min(kHeaderSize - header_have_, input.size());
    std::copy_n(input.begin(), n, header_bytes_.begin() + static_cast<std::ptrdiff_t>(header_have_));
    header_have_ += n;
    used = n;
    if (header_have_ < kHeaderSize) return used;
    if (!accept_header()) return used;
    payload_have_ = 0;
    // Zero-copy path: the whole payload is already in this input.
    if (input.size() - used >= header_.payload_size) {
      ready_payload_ = input.subspan(used, header_.payload_size);
      ready_ = true;
      header_have_ = 0;
      return used + header_.payload_size;
    }
    payload_.resize(header_.payload_size);
  }
  std::size_t n = std::min(header_.payload_size - payload_have_, input.size() - used);
  std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(used), n,
              payload_.begin() + static_cast<std::ptrdiff_t>(payload_have_));
  payload_have_ += n;
  used += n;
  if (payload_have_ == header_.payload_size) {
    ready_payload_ = std::span<const std::uint8_t>(payload_.data(), payload_have_);
    ready_ = true;
    header_have_ = 0;
  }
  return used;
}

}  // namespace ibat::protocol
