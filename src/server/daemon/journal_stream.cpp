// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// $JOURNAL_STREAM check (see journal_stream.h).
#include "server/daemon/journal_stream.h"

#include <sys/stat.h>

#include <charconv>
#include <cstdint>
#include <cstring>

namespace ibat::server {
namespace {

// Parses a decimal number at the start of [first, last); returns where it ends, nullptr if none.
const char* parse_number(const char* first, const char* last, std::uintmax_t& out) {
  auto [end, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && end != first ? end : nullptr;
}

}  // namespace

bool is_journal_stream(int fd, const char* journal_stream) {
  if (journal_stream == nullptr) return false;
  const char* last = journal_stream + std::strlen(journal_stream);
  std::uintmax_t device = 0, inode = 0;
  const char* colon = parse_number(journal_stream, last, device);
  if (colon == nullptr || colon == last || *colon != ':') return false;
  const char* end = parse_number(colon + 1, last, inode);
  if (end != last) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  return static_cast<std::uintmax_t>(st.st_dev) == device && static_cast<std::uintmax_t>(st.st_ino) == inode;
}

}  // namespace ibat::server
