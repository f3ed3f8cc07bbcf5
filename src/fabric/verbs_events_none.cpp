// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// open_verbs_events for builds without libibverbs: there is never an event source.
#include "fabric/port_events.h"

namespace ibat::fabric {

std::unique_ptr<PortEventSource> open_verbs_events(asio::io_context&, const std::string&, int, std::string& why) {
  why = "built without libibverbs";
  return nullptr;
}

}  // namespace ibat::fabric
