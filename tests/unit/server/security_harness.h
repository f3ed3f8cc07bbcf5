// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Shared pieces of the security tests (tests/unit/server/security_*_test.cpp): ibatd's Service on
// a loop thread with a fake SA (clients: test_client.h), and connect_as(), which opens a
// connection whose SO_PEERCRED/SO_PEERGROUPS are another user's (a forked child drops to that
// uid/gid/groups, connects, and hands the connected fd back over SCM_RIGHTS).
#pragma once

#include <array>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/daemon/service.h"
#include "daemon_fixture.h"
#include "server_test_support.h"
#include "test_client.h"
#include "protocol/frame_splitter.h"
#include "protocol/messages.h"

namespace ibat::server::security_test {

using namespace std::chrono_literals;

using test_support::Client;
using test_support::FakeSa;
using test_support::Frame;
using test_support::gid;
using test_support::kLocalGid;

// The peak resident set of this process (VmHWM), in KiB; the daemon under test runs in it.
inline long peak_rss_kib() {
  FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  long kib = -1;
  char line[256];
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  }
  std::fclose(status);
  return kib;
}

// CPU time (user + system) this process has used, in seconds.
inline double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Who a connect_as() child becomes before it connects.
struct Identity {
  uid_t uid = 65534;  // nobody
  gid_t gid = 65534;  // nogroup
  std::vector<gid_t> groups;
};

// Connects to `path` as `who`. Returns the connected fd, or -errno of the child's connect().
// The test process must be root (it checks with can_switch_user()).
inline bool can_switch_user() { return ::geteuid() == 0; }

inline int connect_as(const std::string& path, const Identity& who) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -errno;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  pid_t child = ::fork();
  if (child == 0) {  // only async-signal-safe calls from here: the parent has threads
    ::close(pair[0]);
    int result = 0;
    int fd = -1;
    if (::setgroups(who.groups.size(), who.groups.data()) != 0 || ::setresgid(who.gid, who.gid, who.gid) != 0 ||
        ::setresuid(who.uid, who.uid, who.uid) != 0) {
      result = -EPERM;
    } else {
      fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) result = -errno;
    }
    // Send the result, with the fd attached when connected.
    msghdr msg{};
    iovec iov{&result, sizeof(result)};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (result == 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ::_exit(::sendmsg(pair[1], &msg, 0) == static_cast<ssize_t>(sizeof(result)) ? 0 : 1);
  }
  ::close(pair[1]);
  int result = -ECHILD;
  int fd = -1;
  if (child > 0) {
    msghdr msg{};
    iovec iov{&result, sizeof(result)};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (::recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof(result))) result = -ECHILD;
    if (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    }
    int status = 0;
    ::waitpid(child, &status, 0);
  }
  ::close(pair[0]);
  if (result != 0) {
    if (fd >= 0) ::close(fd);
    return result;
  }
  return fd;
}

// The first of a few well-known groups that exists here, other than the nobody group.
inline std::optional<std::pair<std::string, gid_t>> some_group() {
  for (const char* name : {"adm", "daemon", "sys", "users", "staff"}) {
    if (std::optional<gid_t> g = lookup_group(name); g && *g != 65534) return std::pair{std::string(name), *g};
  }
  return std::nullopt;
}

using test_support::DaemonTest;

}  // namespace ibat::server::security_test
