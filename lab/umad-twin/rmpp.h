// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RMPP on the wire as the kernel's MAD layer writes it for an agent registered with rmpp_version 1:
// the MAD and RMPP header fields, a long message cut into 256-byte DATA segments (the class header
// repeated in each), and the ACK, STOP and ABORT MADs. Pure: no I/O, no clock. The protocol that
// uses them (windows, ACKs, resends) is in rmpp_window.h. Used by the lab's twin of the kernel MAD
// layer (lab/umad-twin) and tested in tests/umad_twin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ibat::umad_twin {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::size_t kMadBytes = 256;
inline constexpr std::size_t kMadHeaderBytes = 24;
inline constexpr std::size_t kRmppHeaderEnd = 36;                   // common MAD header + RMPP header
inline constexpr std::size_t kRmppPayloadPerSegment = kMadBytes - kRmppHeaderEnd;  // 220

inline constexpr std::uint8_t kRmppVersion = 1;
inline constexpr std::uint8_t kRmppTypeData = 1;
inline constexpr std::uint8_t kRmppTypeAck = 2;
inline constexpr std::uint8_t kRmppTypeStop = 3;
inline constexpr std::uint8_t kRmppTypeAbort = 4;
inline constexpr std::uint8_t kRmppFlagActive = 0x01;
inline constexpr std::uint8_t kRmppFlagFirst = 0x02;
inline constexpr std::uint8_t kRmppFlagLast = 0x04;

// RMPPStatus values (IBA vol. 1 table 170; the kernel's IB_MGMT_RMPP_STATUS_*). ABORT carries
// 118-127, STOP carries "resources exhausted".
inline constexpr std::uint8_t kRmppStatusResourcesExhausted = 1;
inline constexpr std::uint8_t kRmppStatusTotalTimeTooLong = 118;
inline constexpr std::uint8_t kRmppStatusBadLength = 119;      // Last and PayloadLength disagree
inline constexpr std::uint8_t kRmppStatusBadSegment = 120;     // First and SegmentNumber disagree
inline constexpr std::uint8_t kRmppStatusBadType = 121;
inline constexpr std::uint8_t kRmppStatusWindowTooSmall = 122;  // NewWindowLast below SegmentNumber
inline constexpr std::uint8_t kRmppStatusSegmentTooBig = 123;
inline constexpr std::uint8_t kRmppStatusIllegalStatus = 124;
inline constexpr std::uint8_t kRmppStatusBadVersion = 125;
inline constexpr std::uint8_t kRmppStatusAbortMin = 118;
inline constexpr std::uint8_t kRmppStatusAbortMax = 127;

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
std::uint8_t rmpp_version(std::span<const std::uint8_t> mad);
std::uint8_t rmpp_type(std::span<const std::uint8_t> mad);
std::uint8_t rmpp_flags(std::span<const std::uint8_t> mad);
std::uint8_t rmpp_status(std::span<const std::uint8_t> mad);
std::uint32_t segment_number(std::span<const std::uint8_t> mad);
std::uint32_t payload_length(std::span<const std::uint8_t> mad);  // DATA: PayloadLength; ACK: NewWindowLast

// Cuts one RMPP-active message (header + data, any length >= the class header) into DATA segments
// of exactly 256 bytes: segment numbers 1..n, FIRST on the first, LAST on the last, PayloadLength
// in the first (the whole transfer) and in the last (its own bytes), as the kernel's sender sets them.
std::vector<Bytes> segment(std::span<const std::uint8_t> message);

// An RMPP ACK, STOP or ABORT answering `received` (a segment or a control MAD of the transfer), as
// the kernel builds one: the class header copied, the R bit of the method flipped (it goes back the
// way `received` came), RMPPVersion 1, ACTIVE (RRespTime kept), `status`, SegmentNumber and
// NewWindowLast (0 and 0 for STOP and ABORT); 256 bytes, zero past the class header.
Bytes control_mad(std::span<const std::uint8_t> received, std::uint8_t type, std::uint8_t status,
                  std::uint32_t segment = 0, std::uint32_t window_last = 0);

}  // namespace ibat::umad_twin
