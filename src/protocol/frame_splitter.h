// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Incremental frame splitter: feed it the bytes read from a stream socket in any chunking and it
// hands out complete frames (header + payload view). It rejects a bad length or version as soon
// as the header is in, and never buffers more than one frame (kMaxFrame bytes).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/frame.h"

namespace ibat::protocol {

// Why the stream cannot be parsed any further. The peer should get an ERROR frame with this
// status and message (and `id`, 0 when the header did not get that far), then be disconnected.
struct SplitError {
  Status status = Status::malformed;  // malformed or unsupported (unknown version)
  std::uint32_t id = 0;
  std::string message;
};

class FrameSplitter {
 public:
  // Consumes all of `input`, calling on_frame(const FrameHeader&, std::span<const uint8_t> payload)
  // for each complete frame in order (the payload view is valid only during the call). Stops at
  // the first malformed header and returns its error; every later call returns the same error.
  template <class OnFrame>
  std::optional<SplitError> feed(std::span<const std::uint8_t> input, OnFrame&& on_frame) {
    while (!error_ && !input.empty()) {
      std::size_t used = step(input);
      input = input.subspan(used);
      if (ready_) {
        ready_ = false;
        on_frame(static_cast<const FrameHeader&>(header_), ready_payload_);
      }
    }
    return error_;
  }

  // True when no partial frame is buffered (the stream ended on a frame boundary).
  bool idle() const { return header_have_ == 0; }

 private:
  // Consumes bytes of at most one frame; sets ready_/ready_payload_ when one completes.
  std::size_t step(std::span<const std::uint8_t> input);
  bool accept_header();

  std::array<std::uint8_t, kHeaderSize> header_bytes_{};
  std::size_t header_have_ = 0;
  FrameHeader header_;
  std::vector<std::uint8_t> payload_;  // partial payload; capacity never exceeds kMaxPayload
  std::size_t payload_have_ = 0;
  bool ready_ = false;
  std::span<const std::uint8_t> ready_payload_;
  std::optional<SplitError> error_;
};

}  // namespace ibat::protocol
