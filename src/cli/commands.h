// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ibat CLI's commands: each validates its arguments (bad input -> UsageError, exit 2),
// connects to ibatd through libibat, runs one operation and prints the result. Failures are
// thrown as CommandError with the exit code of exit_codes.h and a message for stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace ibat::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CommandError : std::runtime_error {
  CommandError(int exit_code, const std::string& message) : std::runtime_error(message), code(exit_code) {}
  int code;
};

struct ResolveArgs {
  std::string dgid, dlid, ip, hw;  // exactly one is set
  std::string sgid, pkey;
  std::string port;     // "mlx5_1:1": its GID is the source GID (not with sgid)
  std::string timeout;  // milliseconds; empty: ibatd's default
  std::string service_id, qos_class, tclass;  // empty: not given
  bool cache_only = false;
  bool force_sa = false;
  bool verify = false;  // ask the SA afresh too, and compare its answer with the cached one
  bool json = false;
};

int run_resolve(const std::string& socket, const ResolveArgs& args);
// `port`: only the paths from that port ("mlx5_0:1"); "": every port's. `dgid`: only the paths to
// that GID; "": every destination.
int run_paths(const std::string& socket, bool json, const std::string& port = "", const std::string& dgid = "");
// ibatd's running configuration (every key, after reloads) as TOML text or a JSON array.
int run_config(const std::string& socket, bool json);
// One line per port (device, state, GID, LID, SM LID, subnet, entries, SA queries, pacer window).
int run_ports(const std::string& socket, bool json);
// How long `ibat health` waits for ibatd by default: NHC's own per-check default (check_cmd_status
// -t 5), so a wedged ibatd fails the node's check with our message instead of NHC's kill.
inline constexpr int kHealthTimeoutSeconds = 5;

// 0 when every port ibatd serves is active with an SM and an answering SA; else kExitUnhealthy and
// one line per port that is not (what a node health check runs before a node gets jobs). When
// ibatd is not running, cannot be reached, or has not answered within `timeout` seconds (text;
// empty: kHealthTimeoutSeconds): kExitNoAnswer and one line on stderr.
int run_health(const std::string& socket, bool json, const std::string& timeout = "");
int run_stats(const std::string& socket, bool json, bool prometheus);
// `port`: only the paths from that port ("mlx5_0:1"); "": every port's.
int run_flush(const std::string& socket, const std::string& dgid, const std::string& pkey, const std::string& port);
int run_neigh_add(const std::string& socket, const std::string& ip, const std::string& hw, const std::string& slid);
int run_neigh_del(const std::string& socket, const std::string& ip);
int run_neigh_list(const std::string& socket, bool json);
int run_neigh_replay(const std::string& socket, const std::string& file);
int run_watch(const std::string& socket, bool json);

}  // namespace ibat::cli
