// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Listening Unix sockets for ibatd's native and ACM endpoints.
#include "server/daemon/unix_listener.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>

#include <fmt/format.h>

namespace ibat::server {

using asio::local::stream_protocol;

namespace {

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

stream_protocol::acceptor listen_unix(asio::io_context& loop, const std::string& path, std::uint32_t mode) {
  std::error_code fs_error;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, fs_error);
  if (std::filesystem::exists(std::filesystem::symlink_status(path, fs_error))) {
    if (!is_socket(path)) throw std::runtime_error(fmt::format("{}: exists and is not a socket", path));
    stream_protocol::socket probe(loop);
    asio::error_code ec;
    probe.connect(stream_protocol::endpoint(path), ec);
    if (!ec) throw std::runtime_error(fmt::format("{}: another server is listening on it", path));
    std::filesystem::remove(path, fs_error);  // stale: its owner is gone
  }
  stream_protocol::acceptor acceptor(loop);
  asio::error_code ec;
  acceptor.open(stream_protocol(), ec);
  if (!ec) acceptor.bind(stream_protocol::endpoint(path), ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot bind: {}", path, ec.message()));
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot set mode {:o}: {}", path, mode, std::strerror(errno)));
  }
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot listen: {}", path, ec.message()));
  return acceptor;
}

void remove_socket_file(const std::string& path) {
  if (is_socket(path)) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
}

}  // namespace ibat::server
