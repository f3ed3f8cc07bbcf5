// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Reads /proc/loadavg for core::SpinPolicy (run_queue.h).
#include "kernel/run_queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string_view>

namespace ibat::kernel {

std::optional<unsigned> parse_loadavg_runnable(std::string_view text) {
  for (int field = 0; field < 3; ++field) {
    std::size_t space = text.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    text.remove_prefix(space + 1);
  }
  unsigned runnable = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), runnable);
  if (error != std::errc() || end == text.data() + text.size() || *end != '/') return std::nullopt;
  return runnable;
}

std::optional<RunQueueSample> sample_run_queue() {
  static const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  // Opened for each sample (at most every 10 ms): libibat keeps no descriptor in its host process.
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0 || cpus <= 0) return std::nullopt;
  std::optional<unsigned> runnable = parse_loadavg_runnable(std::string_view(buf, static_cast<std::size_t>(n)));
  if (!runnable) return std::nullopt;
  return RunQueueSample{*runnable, static_cast<unsigned>(cpus)};
}

}  // namespace ibat::kernel
