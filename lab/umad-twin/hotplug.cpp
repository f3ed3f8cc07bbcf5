// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's control FIFO (see hotplug.h).
#include "hotplug.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "raw_io.h"

namespace ibat::umad_twin {
namespace {

constexpr const char* kBlanks = " \t\r\n";

std::string_view trim(std::string_view s) {
  const std::size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

}  // namespace

std::optional<ControlCommand> parse_control(std::string_view line, std::string& error) {
  const std::string_view text = trim(line);
  const std::size_t space = text.find_first_of(kBlanks);
  const std::string_view verb = text.substr(0, space);
  const std::string_view ca = space == std::string_view::npos ? std::string_view{} : trim(text.substr(space));
  ControlCommand command;
  if (verb == "add") {
    command.verb = ControlCommand::Verb::add;
  } else if (verb == "remove") {
    command.verb = ControlCommand::Verb::remove;
  } else if (verb == "lose-rmpp-segment") {
    const std::size_t blank = ca.find_first_of(kBlanks);
    const std::string_view number = blank == std::string_view::npos ? std::string_view{} : trim(ca.substr(blank));
    std::uint32_t n = 0;
    const auto [end, err] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (blank == std::string_view::npos || err != std::errc{} || end != number.data() + number.size() || n == 0) {
      error = "'lose-rmpp-segment' takes a CA name and a segment number (1 or more)";
      return std::nullopt;
    }
    command.verb = ControlCommand::Verb::lose_segment;
    command.ca = std::string(ca.substr(0, blank));
    command.segment = n;
    return command;
  } else {
    error = "unknown command '" + std::string(verb) + "' (use: add <ca>, remove <ca>, lose-rmpp-segment <ca> <n>)";
    return std::nullopt;
  }
  if (ca.empty() || ca.find_first_of(kBlanks) != std::string_view::npos) {
    error = "'" + std::string(verb) + "' takes one CA name";
    return std::nullopt;
  }
  command.ca = std::string(ca);
  return command;
}

ControlFifo::ControlFifo(std::string path) : path_(std::move(path)) {
  if (::mkfifo(path_.c_str(), 0600) == 0) {
    made_ = true;
  } else if (errno != EEXIST) {
    throw std::runtime_error("cannot make the FIFO " + path_ + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) {
    throw std::runtime_error(path_ + " exists and is not a FIFO");
  }
  // O_RDWR: the twin is a writer too, so the FIFO never reads EOF when a test's writer closes.
  fd_ = ::open(path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const std::string why = std::strerror(errno);
    if (made_) ::unlink(path_.c_str());
    throw std::runtime_error("cannot open the FIFO " + path_ + ": " + why);
  }
}

ControlFifo::~ControlFifo() {
  raw_close(fd_);
  if (made_) ::unlink(path_.c_str());
}

std::vector<std::string> ControlFifo::read_lines() {
  char buf[4096];
  ssize_t n;
  while ((n = raw_read(fd_, buf, sizeof buf)) > 0) partial_.append(buf, static_cast<std::size_t>(n));
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line = trim(std::string_view(partial_).substr(start, end - start));
    if (!line.empty()) lines.emplace_back(line);
  }
  partial_.erase(0, start);
  return lines;
}

void ControlFifo::done(const std::string& line) const {
  const std::string reply_path = path_ + ".done";
  const int fd = ::open(reply_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "ibat-umad-twin: cannot write %s: %s\n", reply_path.c_str(), std::strerror(errno));
    return;
  }
  const std::string text = line + "\n";
  (void)!raw_write(fd, text.data(), text.size());
  raw_close(fd);
}

}  // namespace ibat::umad_twin
