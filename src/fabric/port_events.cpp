// Names of port events, for logs.
#include "fabric/port_events.h"

namespace ibat::fabric {

std::string_view to_string(PortEvent event) {
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

}  // namespace ibat::fabric
