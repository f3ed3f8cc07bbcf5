// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Exit codes of the ibat CLI: one per failure kind, so scripts can tell "no path" from "daemon
// down" from "bad arguments". Documented in `ibat --help` and ibat(1).
#pragma once

#include <string>

namespace ibat::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // anything else (unreadable file, unexpected reply content)
  kExitUsage = 2,         // bad command line
  kExitConnect = 3,       // cannot connect to ibatd
  kExitProtocol = 4,      // connection lost, or ibatd and ibat disagree on the protocol
  kExitTimeout = 10,      // the request timed out (no SA answer)
  kExitUnreachable = 11,  // destination out of service / port down / no neighbour entry
  kExitNoRecord = 12,     // the SA has no path
  kExitOverloaded = 13,   // ibatd is overloaded
  kExitCancelled = 14,    // cancelled (ibatd shutting down)
  kExitInvalid = 15,      // ibatd refused the values (zero GID, bad P_Key, LID 0)
  kExitDenied = 16,       // privileged command without root / the admin group
  kExitUnsupported = 17,  // ibatd does not know this command (older daemon)
  kExitUnhealthy = 18,    // ibat health: a port is not active, has no SM, or its SA does not answer
  kExitNoAnswer = 19,     // ibat health: ibatd did not answer in time, cannot be reached, or is not running
  kExitDisagree = 20,     // ibat resolve --verify: the cached path and the SA's fresh answer differ
};

// The exit code for an ibat_status value.
int exit_code_for(int ibat_status);
// The exit-code table printed at the end of `ibat --help`.
std::string exit_code_help();

}  // namespace ibat::cli
