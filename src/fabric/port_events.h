// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Port and SM events from the HCA: on a real HCA, libibverbs async events of the verbs device that
// matches the umad CA (IBV_EVENT_SM_CHANGE, CLIENT_REREGISTER, LID_CHANGE, PORT_ACTIVE, PORT_ERR,
// GID_CHANGE, PKEY_CHANGE) tell the daemon what the kernel saw, at no cost to the SM. The source
// sits behind PortEventSource so that ibatd runs the same where no verbs device exists (the lab:
// umad2sim has none) and unit tests inject events. What each event means: docs/fabric.md
// "Port and SM monitoring".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <asio/io_context.hpp>

namespace ibat::fabric {

enum class PortEvent : std::uint8_t {
  sm_change,          // the port's SM LID changed (fail-over)
  client_reregister,  // the SM asks clients to register again: it restarted and forgot us
  lid_change,
  port_active,
  port_error,
  gid_change,
  pkey_change,
};

// Its name, for logs (inline: the daemon's library logs events without linking the fabric's).
constexpr std::string_view to_string(PortEvent event) {
  switch (event) {
    case PortEvent::sm_change: return "sm_change";
    case PortEvent::client_reregister: return "client_reregister";
    case PortEvent::lid_change: return "lid_change";
    case PortEvent::port_active: return "port_active";
    case PortEvent::port_error: return "port_error";
    case PortEvent::gid_change: return "gid_change";
    case PortEvent::pkey_change: return "pkey_change";
  }
  return "unknown";
}

class PortEventSource {
 public:
  using Handler = std::function<void(PortEvent)>;
  virtual ~PortEventSource() = default;
  // Events of the watched port, delivered on the owner's loop thread until stop().
  virtual void start(Handler on_event) = 0;
  virtual void stop() = 0;
};

// The verbs event source of port `port` of the verbs device named `ca`, or nullptr with the reason
// in `why` (built without libibverbs, no such verbs device, it cannot be opened).
std::unique_ptr<PortEventSource> open_verbs_events(asio::io_context& loop, const std::string& ca, int port,
                                                   std::string& why);

}  // namespace ibat::fabric
