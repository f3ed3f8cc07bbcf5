// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Mapping of libibat statuses to CLI exit codes, and their help text.
#include "cli/exit_codes.h"

#include "ibat.h"

namespace ibat::cli {

int exit_code_for(int status) {
  switch (status) {
    case IBAT_OK: return kExitOk;
    case IBAT_ETIMEOUT: return kExitTimeout;
    case IBAT_EUNREACHABLE: return kExitUnreachable;
    case IBAT_ENORECORD: return kExitNoRecord;
    case IBAT_EOVERLOADED: return kExitOverloaded;
    case IBAT_ECANCELLED: return kExitCancelled;
    case IBAT_EINVALID: return kExitInvalid;
    case IBAT_EDENIED: return kExitDenied;
    case IBAT_EUNSUPPORTED: return kExitUnsupported;
    case IBAT_ECONNECT: return kExitConnect;
    case IBAT_EMALFORMED:
    case IBAT_EDISCONNECTED:
    case IBAT_EPROTO: return kExitProtocol;
    default: return kExitFailure;
  }
}

std::string exit_code_help() {
  return "Exit codes:\n"
         "  0   success (resolve: a path was returned)\n"
         "  1   other failure (unreadable file, unexpected reply)\n"
         "  2   bad command line\n"
         "  3   cannot connect to ibatd\n"
         "  4   connection to ibatd lost, or protocol mismatch\n"
         "  10  timeout: no answer from the subnet administrator in time\n"
         "  11  unreachable: destination out of service, port down, or unknown IP (neigh del: no entry)\n"
         "  12  no-record: the subnet administrator has no path (--cache-only: none cached)\n"
         "  13  overloaded: ibatd refused the request, retry later\n"
         "  14  cancelled (ibatd shutting down)\n"
         "  15  invalid: ibatd refused the values (zero GID, bad P_Key, LID 0)\n"
         "  16  denied: needs root or ibatd's admin group\n"
         "  17  unsupported by this ibatd\n"
         "  18  health: a port is not active, has no SM, or its SA does not answer\n"
         "  19  health: ibatd did not answer within --timeout, cannot be reached, or is not running\n"
         "  20  resolve --verify: the cached path and the SA's fresh answer differ\n"
         "With --json, a failure prints {\"error\": {\"code\": EXIT, \"message\": TEXT}} on stdout\n"
         "(the same line as text on stderr).\n";
}

}  // namespace ibat::cli
