// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The RMPP protocol of the kernel's MAD layer (drivers/infiniband/core/mad_rmpp.c) as the lab's
// twin runs it: the sender of one message (its window, the ACKs that move it, the resend from the
// last ACKed segment, the retries) and the receiver that joins segments into messages, grants
// windows, re-ACKs repeats and answers malformed transfers with ABORT. Pure: no I/O, no clock (the
// time is passed in). Wire format: rmpp.h; timers, datagrams and umad files: mad_layer.cpp.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "rmpp.h"

namespace ibat::umad_twin {

using RmppClock = std::chrono::steady_clock;

// The kernel's numbers: the window its receiver grants (an eighth of its 512 receive buffers), its
// sender's wait for an ACK (timeout_ms of the send, at most 2 s; 2 s without one),
// the whole time a receiver gives a transfer before it ABORTs it, and how long it remembers a
// joined message to re-ACK the sender's repeats.
inline constexpr std::uint32_t kRmppWindow = 64;
inline constexpr std::chrono::milliseconds kRmppMaxAckWait{2000};
inline constexpr std::chrono::seconds kRmppTransferLifetime{40};
inline constexpr std::chrono::seconds kRmppJoinedMemory{10};

std::chrono::milliseconds rmpp_ack_wait(std::uint32_t timeout_ms);

// What the kernel refuses in any RMPP-active MAD before it looks at the transfer: an RMPPVersion
// other than 1 (ABORT "unsupported version"), an unknown RMPPType (ABORT "bad type").
std::optional<std::uint8_t> rmpp_fault(std::span<const std::uint8_t> mad);

// The sender of one message of `segments` DATA segments. Its window starts at segment 1 (the
// receiver's first ACK grants more); an ACK moves the last segment acknowledged and the window;
// a timeout resends from the segment after the last one acknowledged, up to the window, until the
// retries (renewed by every ACK that moves the last acknowledged) are used up.
class RmppSender {
 public:
  struct Burst {  // segments first..last go on the wire now; none when last < first
    std::uint32_t first = 1, last = 0;
    bool empty() const { return last < first; }
    std::uint32_t count() const { return empty() ? 0 : last - first + 1; }
  };
  struct Reaction {
    Burst send;
    std::optional<std::uint8_t> abort;  // answer with an ABORT of this RMPPStatus
    bool ended = false;                 // the transfer is over (aborted): the send ends, unreported
    bool completed = false;             // this ACK acknowledged the last segment
  };

  RmppSender(std::uint32_t segments, std::uint32_t retries);

  Burst start();
  Reaction on_ack(std::uint32_t segment, std::uint32_t window_last, std::uint8_t status);
  Reaction on_stop(std::uint8_t status);
  Reaction on_abort(std::uint8_t status);
  Reaction on_fault(std::uint8_t status);  // the peer's MAD was refused (rmpp_fault): ABORT it
  // The wait for an ACK ran out: the resend, or nothing when the retries are used up or every
  // segment is acknowledged (then the send waits only for its answer, which is not resent).
  std::optional<Burst> on_timeout();

  bool acknowledged() const { return last_ack_ == segments_; }
  std::uint32_t last_acknowledged() const { return last_ack_; }
  std::uint32_t window_last() const { return window_last_; }

 private:
  Burst send_up_to_window();
  Reaction abort_with(std::uint8_t status) const;

  std::uint32_t segments_;
  std::uint32_t max_retries_;
  std::uint32_t retries_left_;
  std::uint32_t sent_ = 0;  // the highest segment sent since the last resend began
  std::uint32_t last_ack_ = 0;
  std::uint32_t window_last_ = 1;
};

// Joins DATA segments per source (LID, QP), class and TID into messages, as the kernel's receiver
// does: segment 1 (FIRST) begins a transfer and is ACKed with a window of kRmppWindow more; a
// segment past a gap is held (within the window) until the gap fills; reaching the window's end
// ACKs it and grants the next; the LAST segment completes the message and is ACKed. A repeat of a
// segment already ACKed, or of any segment of a joined message (remembered kRmppJoinedMemory), is
// answered with the ACK again; other repeats and segments beyond the window are dropped silently.
// Malformed transfers get an ABORT (an RMPPStatus, FIRST on a segment other than 1; and, stricter
// than the kernel, a LAST whose PayloadLength disagrees with the FIRST's); a message past the bound
// gets a STOP (resources exhausted); a transfer not joined within kRmppTransferLifetime, an ABORT.
class Reassembler {
 public:
  struct Source {
    std::uint16_t lid = 0;
    std::uint32_t qp = 0;
    auto operator<=>(const Source&) const = default;
  };
  struct Result {
    enum class Kind { incomplete, complete, dropped, ignored } kind = Kind::incomplete;
    Bytes message;       // when complete: the class header once, then every segment's data
    std::string reason;  // when dropped or ignored, or a segment held: why
    Bytes reply;         // an ACK, STOP or ABORT to send back to the source; empty: none
  };
  struct Expired {
    Source source;
    Bytes abort;
  };

  explicit Reassembler(std::size_t max_message_bytes = 64u << 20, std::uint32_t window = kRmppWindow)
      : max_bytes_(max_message_bytes), window_(window) {}

  // One received DATA segment (a MAD with RMPP ACTIVE, type DATA, version 1: see rmpp_fault).
  Result add(Source source, std::span<const std::uint8_t> segment, RmppClock::time_point now);

  // Ends the transfers whose time is up (each with the ABORT for its source) and forgets the
  // joined messages remembered long enough.
  std::vector<Expired> expire(RmppClock::time_point now);
  std::optional<RmppClock::time_point> next_deadline() const;
  std::size_t in_progress() const;  // transfers being joined

 private:
  struct Transfer {
    Bytes header;                         // segment 1's class header: ACKs and ABORTs are built on it
    Bytes message;                        // the class header and the data of segments 1..in_order
    std::map<std::uint32_t, Bytes> held;  // segments past a gap, by number
    std::uint32_t in_order = 0;
    std::uint32_t last_ack = 0;
    std::uint32_t window_last = 1;
    std::uint32_t first_payload_length = 0;
    bool joined = false;
    RmppClock::time_point deadline;
  };
  using Key = std::tuple<Source, std::uint8_t, std::uint64_t>;  // source, class, TID

  // Appends one in-order segment; false when the message would pass the bound.
  bool append(Transfer& t, std::span<const std::uint8_t> segment) const;
  Bytes ack(Transfer& t) const;
  Result finish(Transfer& t, std::span<const std::uint8_t> last, RmppClock::time_point now) const;

  std::size_t max_bytes_;
  std::uint32_t window_;
  std::map<Key, Transfer> transfers_;
};

}  // namespace ibat::umad_twin
