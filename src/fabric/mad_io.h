// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The seam between MAD users (SaClient, PortMonitor, TrapSubscriber) and the wire: what a MAD to
// send and a received MAD carry, and the MadSender interface that UmadTransport implements and unit
// tests replace with a fake. Everything here is plain data; no libibumad types leak out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/types.h"

namespace ibat::fabric {

// Which agent (and so which QP and addressing) a MAD goes out through.
enum class MadRoute : std::uint8_t {
  sa,            // class 0x03 on QP1 to `dlid` (the SM LID), Q_Key 0x80010000
  smi_lid,       // LID-routed SMP (class 0x01) on QP0 to `dlid`
  smi_directed,  // directed-route SMP (class 0x81) on QP0, permissive DLID
};

struct OutgoingMad {
  MadRoute route = MadRoute::sa;
  core::Lid dlid;
  std::uint32_t remote_qpn = 1;     // QP1 for GS classes; ignored for SMPs (QP0)
  std::uint8_t sl = 0;
  // > 0: a request the kernel should match a response to, for this long: the kernel drops an
  // answer that comes later, so it covers the request's remaining attempts, not just this one.
  std::uint32_t timeout_ms = 0;
  std::vector<std::uint8_t> bytes;  // the 256-byte MAD, network byte order
};

struct ReceivedMad {
  std::vector<std::uint8_t> bytes;  // what the transport kept: at least 256 bytes, zero-filled
  std::size_t length = 0;           // the message's length: 256 for one MAD, more for an RMPP one;
                                    // more than bytes.size() when it was too long to keep whole
  core::Lid slid;                   // source LID from the work completion
  std::uint32_t source_qpn = 0;
  int status = 0;                   // umad_status(): 0, or e.g. 110 when a send was not answered
};

class MadSender {
 public:
  virtual ~MadSender() = default;
  // Sends one MAD; returns false if the transport refused it (it is then never answered).
  virtual bool send(const OutgoingMad& mad) = 0;
};

}  // namespace ibat::fabric
