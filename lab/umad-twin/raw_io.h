// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// read/write/close straight to the kernel, for the twin's own descriptors: the twin replaces the
// libc symbols, so calling them from inside it would come back to itself.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace ibat::umad_twin {

inline ssize_t raw_read(int fd, void* buf, std::size_t n) { return ::syscall(SYS_read, fd, buf, n); }
inline ssize_t raw_write(int fd, const void* buf, std::size_t n) { return ::syscall(SYS_write, fd, buf, n); }
inline int raw_close(int fd) { return static_cast<int>(::syscall(SYS_close, fd)); }

}  // namespace ibat::umad_twin
