// RMPP as the kernel's MAD layer does it for an agent registered with rmpp_version 1: a message
// longer than one MAD is cut into 256-byte DATA segments (the class header repeated in each), and
// the receiver joins them back into one message. Pure: no I/O, no clock. Used by the lab's twin
// of the kernel MAD layer (lab/umad-twin) and tested in tests/umad_twin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace ibat::umad_twin {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::size_t kMadBytes = 256;
inline constexpr std::size_t kMadHeaderBytes = 24;
inline constexpr std::size_t kRmppHeaderEnd = 36;                   // common MAD header + RMPP header
inline constexpr std::size_t kRmppPayloadPerSegment = kMadBytes - kRmppHeaderEnd;  // 220

inline constexpr std::uint8_t kRmppTypeData = 1;
inline constexpr std::uint8_t kRmppFlagActive = 0x01;
inline constexpr std::uint8_t kRmppFlagFirst = 0x02;
inline constexpr std::uint8_t kRmppFlagLast = 0x04;

// Where a class's data starts in each segment (the kernel's ib_get_mad_data_offset): the SA repeats
// its 56-byte header (MAD + RMPP + SM_Key, AttributeOffset, ComponentMask) in every segment.
std::size_t data_offset(std::uint8_t mgmt_class);

// Header fields of a MAD (big-endian on the wire).
std::uint8_t mgmt_class(std::span<const std::uint8_t> mad);
std::uint8_t method(std::span<const std::uint8_t> mad);
std::uint64_t tid(std::span<const std::uint8_t> mad);
void set_tid(std::span<std::uint8_t> mad, std::uint64_t value);
bool is_response(std::span<const std::uint8_t> mad);  // R bit, or TrapRepress (the kernel's rule)
bool rmpp_class(std::uint8_t mgmt_class);  // the classes the kernel runs RMPP for
bool rmpp_active(std::span<const std::uint8_t> mad);
std::uint8_t rmpp_flags(std::span<const std::uint8_t> mad);
std::uint32_t segment_number(std::span<const std::uint8_t> mad);
std::uint32_t payload_length(std::span<const std::uint8_t> mad);

// Cuts one RMPP-active message (header + data, any length >= the class header) into DATA segments
// of exactly 256 bytes: segment numbers 1..n, FIRST on the first, LAST on the last, PayloadLength
// in the first (the whole transfer) and in the last (its own bytes), as the kernel's sender sets them.
std::vector<Bytes> segment(std::span<const std::uint8_t> message);

// Joins DATA segments per (source LID, TID) into messages. Segments must arrive in order: a gap or a
// segment out of order drops the whole message (the lab has no ACK window; the requester's timer
// resends, see docs/fabric.md), a repeat of the last segment is ignored, a new FIRST restarts.
class Reassembler {
 public:
  struct Result {
    enum class Kind { incomplete, complete, dropped, ignored } kind = Kind::incomplete;
    Bytes message;       // when complete: the class header once, then every segment's data
    std::string reason;  // when dropped or ignored: why
  };

  explicit Reassembler(std::size_t max_message_bytes = 64u << 20) : max_bytes_(max_message_bytes) {}

  // One received segment (a MAD with RMPP ACTIVE, type DATA) from source_lid.
  Result add(std::uint16_t source_lid, std::span<const std::uint8_t> segment);

  // Forgets every message still being joined (the caller's timer decides when they are stale).
  void clear() { partial_.clear(); }
  std::size_t in_progress() const { return partial_.size(); }

 private:
  struct Partial {
    Bytes message;
    std::uint32_t last_segment = 0;
    std::uint32_t first_payload_length = 0;
  };
  using Key = std::tuple<std::uint16_t, std::uint8_t, std::uint64_t>;  // source LID, class, TID

  std::size_t max_bytes_;
  std::map<Key, Partial> partial_;
};

}  // namespace ibat::umad_twin
