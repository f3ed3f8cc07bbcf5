// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's control FIFO (IBAT_TWIN_CONTROL=<path>), through which a test removes and adds the
// process's CAs as a driver unload, hot-plug or SR-IOV VF would. One command a line:
//   remove <ca>   the CA goes away (interpose.cpp: sysfs, umad files, uevents)
//   add <ca>      it comes back
//   lose-rmpp-segment <ca> <n>   the next RMPP DATA segment numbered n reaching <ca> is lost (a
//                 fault: the sender's ACK timeout resends it; mad_layer.h lose_next_segment)
// After each line the twin appends that line and a newline to "<path>.done", so a test can wait
// for its command to have been carried out. The FIFO is opened O_RDWR, so it never reads EOF.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibat::umad_twin {

struct ControlCommand {
  enum class Verb { add, remove, lose_segment };
  Verb verb = Verb::add;
  std::string ca;
  std::uint32_t segment = 0;  // lose_segment: its number (1 = the first)
};

// One line of the FIFO, surrounding blanks ignored; nothing (and `error` says what is wrong) when
// it is not "add <ca>", "remove <ca>" or "lose-rmpp-segment <ca> <n>".
std::optional<ControlCommand> parse_control(std::string_view line, std::string& error);

class ControlFifo {
 public:
  // Makes the FIFO (or opens the one at `path`). Throws std::runtime_error naming the path and the
  // failure when `path` cannot be made or is not a FIFO.
  explicit ControlFifo(std::string path);
  ~ControlFifo();  // removes the FIFO if it made it
  ControlFifo(const ControlFifo&) = delete;
  ControlFifo& operator=(const ControlFifo&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // readable when a line may have come
  // The complete lines written so far, blank ones left out (a line without its newline yet waits).
  std::vector<std::string> read_lines();
  // Appends `line` and a newline to "<path>.done".
  void done(const std::string& line) const;

 private:
  std::string path_;
  int fd_ = -1;
  bool made_ = false;
  std::string partial_;
};

}  // namespace ibat::umad_twin
