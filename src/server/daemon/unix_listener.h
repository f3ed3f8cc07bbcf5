// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Binding a listening Unix stream socket the way a daemon must: refuse a path a live server holds,
// replace a stale socket file left by a crash, set the permission bits, remove the file on close.
#pragma once

#include <cstdint>
#include <string>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>

namespace ibat::server {

// Throws std::runtime_error naming the path and the reason on failure.
asio::local::stream_protocol::acceptor listen_unix(asio::io_context& loop, const std::string& path,
                                                   std::uint32_t mode);

// Removes the socket file if it is still a socket (best effort).
void remove_socket_file(const std::string& path);

}  // namespace ibat::server
