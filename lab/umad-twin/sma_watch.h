// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmaWatch: what an HCA's SMA does with the SM's PortInfo MADs that ibsim's SMA leaves out, seen
// from the twin in the SM's own process (OpenSM's), as a real HCA sees it in firmware:
//  * every CA port of a real mlx4/mlx5 HCA advertises IsClientReregistrationSupported
//    (PortInfo:CapabilityMask bit 25); ibsim's ports do not, so OpenSM would never set
//    ClientReregister. The watch adds the bit to each PortInfo answer the process receives.
//  * a PortInfo Set with ClientReregister (OpenSM's first master sweep after it starts, a new SM
//    LID, a port just discovered: osm_lid_mgr.c) has the HCA raise IBV_EVENT_CLIENT_REREGISTER in
//    the processes attached to that port. The watch learns each directed route's port GUID from
//    the NodeInfo answers of the sweep, remembers each such Set by TID, and names the port whose
//    SMA answered it (so ibsim has applied it) as an announcement for port_event_bus.h.
// LID-routed Sets are not followed (OpenSM sends its PortInfo Sets by directed route). Pure logic
// over raw MAD bytes, thread-safe; unit tests: tests/umad_twin/sma_watch_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ibat::umad_twin {

class SmaWatch {
 public:
  // A MAD this process sends (`mad`: 256 bytes as on the wire).
  void on_send(const std::uint8_t* mad);
  // A MAD this process receives: PortInfo answers gain the capability bit (in place). Returns the
  // port GUID whose SMA answered a PortInfo Set with ClientReregister.
  std::optional<std::uint64_t> on_receive(std::uint8_t* mad);

 private:
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> guid_of_route_;  // directed route -> port GUID (NodeInfo)
  std::map<std::uint64_t, std::string> reregisters_;    // TID of a Set with ClientReregister -> route
};

}  // namespace ibat::umad_twin
