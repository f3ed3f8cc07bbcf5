// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: command-line options and the destination list (GIDs, optionally with the DLID each
// answer must carry).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibat.h"

namespace ibat::load {

struct Destination {
  ibat_target target{};
  std::string text;                    // as given, for reports
  std::optional<std::uint16_t> dlid;   // when known: every successful answer must carry it
  std::optional<ibat_gid> sgid;        // asked from this source GID (a port of a multi-port host)
};

struct Options {
  std::vector<std::string> sockets;
  std::vector<Destination> destinations;
  unsigned connections = 1;
  unsigned depth = 1;                  // requests outstanding per connection
  double duration_s = 0;               // 0: run until --count requests are sent
  std::uint64_t count = 0;             // 0: no limit (then --duration is required)
  double rate = 0;                     // requests per second over all connections; 0: unpaced
  std::uint32_t timeout_ms = 0;        // per-request deadline sent to the daemon; 0: its default
  double uncached_share = 0;           // share of requests sent with IBAT_RESOLVE_FORCE_SA
  std::uint32_t drain_ms = 0;          // how long to wait for outstanding answers at the end
  std::uint64_t disconnect_every = 0;  // close a connection (requests in flight) after N sends
  bool reconnect = false;              // reopen broken connections (daemon restarts)
  bool expect_exists = false;          // every destination exists: failures violate
  std::vector<std::string> allowed_failures;  // reasons that do not violate --expect-exists
  bool json = false;
};

// Parses argv; on --help or an error prints and returns the exit code in `exit_code`.
std::optional<Options> parse_options(int argc, char** argv, int& exit_code);

}  // namespace ibat::load
