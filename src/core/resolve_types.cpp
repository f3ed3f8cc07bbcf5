// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Names of the entry states, as shown by `ibat paths` and the JSON views.
#include "core/resolve_types.h"

namespace ibat::core {

std::string_view to_string(EntryState s) {
  switch (s) {
    case EntryState::resolving: return "resolving";
    case EntryState::valid: return "valid";
    case EntryState::stale: return "stale";
    case EntryState::provisional: return "provisional";
    case EntryState::failed: return "failed";
    case EntryState::gone: return "gone";
  }
  return "unknown";
}

std::string_view to_string(PathOrigin o) {
  switch (o) {
    case PathOrigin::unknown: return "unknown";
    case PathOrigin::sa_table: return "sa-table";
    case PathOrigin::sa_get: return "sa-get";
    case PathOrigin::warm_cache: return "warm-cache";
    case PathOrigin::neighbour: return "neighbour";
  }
  return "unknown";
}

}  // namespace ibat::core
