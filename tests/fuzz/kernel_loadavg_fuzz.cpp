// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the /proc/loadavg reader behind the poll-or-sleep decision (kernel/run_queue.h): any text
// gives a count or nothing, never reads past the text, and a count it gives is the digits before
// the fourth field's '/'.
#include <cstdlib>
#include <string>
#include <string_view>

#include "kernel/run_queue.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // exact size: ASan sees overreads
  std::optional<unsigned> runnable = ibat::kernel::parse_loadavg_runnable(text);
  if (!runnable) return 0;
  std::string_view rest(text);
  for (int field = 0; field < 3; ++field) rest.remove_prefix(rest.find(' ') + 1);
  if (rest.substr(0, rest.find('/')) != std::to_string(*runnable) && rest[0] != '0') std::abort();  // "007" is 7
  return 0;
}
