// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A deadline on a whole CLI command. libibat's blocking calls and connect(2) to a daemon whose
// listen queue is full take no timeout of their own; a Deadline bounds all of them together: if
// the command has not disarmed it within `limit`, a timer thread writes one line to stderr and
// ends the process with `exit_code` (`ibat health --timeout`).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ibat::cli {

class Deadline {
 public:
  // `line` is written as given (it should end in "\n"); `out_line`, if not empty, to stdout
  // (the JSON error of --json).
  Deadline(std::chrono::milliseconds limit, std::string line, int exit_code, std::string out_line = {});
  ~Deadline();  // disarms
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  // The command has its answer: once this returns the process is not ended by the deadline. (If
  // the deadline has just expired, this blocks while the process ends.)
  void disarm();

 private:
  std::mutex mutex_;
  std::condition_variable disarmed_cv_;
  bool disarmed_ = false;
  std::thread timer_;
};

}  // namespace ibat::cli
