// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Reads a capture file with a size cap (see capture_file.h).
#include "ipoib/capture_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ibat::ipoib {

std::variant<std::vector<std::uint8_t>, DecodeError> read_capture_file(const std::string& path,
                                                                      std::size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return DecodeError{path + ": is a directory, not a capture file"};
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return DecodeError{path + ": cannot open: " + std::strerror(errno)};
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size > max_bytes)
    return DecodeError{path + ": " + std::to_string(size) + " bytes is larger than the limit of " +
                       std::to_string(max_bytes) + " bytes (split it, e.g. with 'editcap -c')"};
  std::vector<std::uint8_t> bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return DecodeError{path + ": read failed"};
  return bytes;
}

}  // namespace ibat::ipoib
