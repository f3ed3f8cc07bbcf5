// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Deadline: a timer thread that ends the process unless disarmed in time (see deadline.h).
#include "cli/deadline.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ibat::cli {

namespace {
void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
}
}  // namespace

Deadline::Deadline(std::chrono::milliseconds limit, std::string line, int exit_code, std::string out_line)
    : timer_([this, limit, line = std::move(line), exit_code, out_line = std::move(out_line)] {
        std::unique_lock lock(mutex_);
        if (disarmed_cv_.wait_for(lock, limit, [this] { return disarmed_; })) return;
        // The lock stays held: disarm() cannot return, so no output of the command follows ours.
        write_all(STDERR_FILENO, line);
        write_all(STDOUT_FILENO, out_line);
        std::_Exit(exit_code);
      }) {}

Deadline::~Deadline() {
  disarm();
  timer_.join();
}

void Deadline::disarm() {
  {
    std::lock_guard lock(mutex_);
    disarmed_ = true;
  }
  disarmed_cv_.notify_one();
}

}  // namespace ibat::cli
