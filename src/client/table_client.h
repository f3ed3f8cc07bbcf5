// The libibat side of the shared path table (docs/shared-table.md): maps the daemon's table
// read-only when it is there and trustworthy, and answers GID resolves that hit a valid entry
// exactly as the daemon would (state valid, age since the SA answer). Everything else, and any
// doubt, is left to the socket.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "client/include/ibat.h"
#include "shm/table_file.h"

namespace ibat::client {

class TableClient {
 public:
  // The table of the daemon at `socket` connected on `fd` (its owner must be the daemon's uid);
  // nullptr when absent, foreign, corrupt, or disabled by IBAT_SHARED_TABLE=0.
  static std::unique_ptr<TableClient> open(const std::string& socket, int fd);

  // Fills `out` and returns true on a hit; false: ask the daemon.
  bool resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out) const;

 private:
  explicit TableClient(shm::MappedTable table) : table_(std::move(table)) {}
  shm::MappedTable table_;
};

}  // namespace ibat::client
