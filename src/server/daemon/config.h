// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd configuration: every core::Policy knob, the fabric port options, the socket paths and
// limits, the snapshot settings and the log level, read from TOML and overridden by flags.
// Each key is validated on its own (type and accepted range, reported with file:line) and the
// Policy as a whole with Policy::validate().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.h"
#include "fabric/fabric_options.h"

namespace ibat::server {

inline constexpr std::string_view kDefaultConfigPath = "/etc/ibat/ibatd.toml";

struct ServerOptions {
  std::string socket = "/run/ibat/ibatd.sock";  // native protocol
  // ACM protocol endpoint; empty: off. On by default: the packaged unit links ibacm's two socket
  // names to it, so ib_acme and librdmacm reach ibatd (docs/acm.md).
  std::string acm_socket = "/run/ibat/acm.sock";
  std::uint32_t socket_mode = 0666;             // permission bits of both socket files
  std::string admin_group;                      // may NEIGH_ADD/DEL and FLUSH besides root; empty: root only
  std::uint32_t max_connections = 1024;
  // Root and admin_group members get this many times each per-uid limit below (connections,
  // pending requests, queued reply bytes); 1: the same as every user.
  std::uint32_t admin_share = 1;
  std::uint32_t max_connections_per_uid = 512;  // of one uid, root too: one user never takes them all
  std::uint32_t max_outstanding_per_connection = 1024;
  // Resolve requests of one uid (root too) pending at once, both sockets together: half of the
  // default policy.max_pending, so one user never takes the other half (a 128-rank job with 64
  // resolves in flight each holds 8,192).
  std::uint32_t max_pending_per_uid = 32'768;
  std::uint32_t max_queued_bytes_per_connection = 4u << 20;  // unsent replies; beyond: disconnect
  // Unsent replies of every connection of both sockets together; beyond: the one holding the most
  // is cut. A fixed size, not a share of the host: 64 connections at their own cap.
  std::uint32_t max_queued_bytes_total = 256u << 20;
  // Unsent replies of one uid's connections, both sockets together; beyond: that uid's connection
  // holding the most is cut. Half the total, as max_pending_per_uid is half of max_pending.
  std::uint32_t max_queued_bytes_per_uid = 128u << 20;
  bool shared_table = true;  // publish valid paths in <socket>.table for libibat (docs/shared-table.md)
  // After answering a client that asks again at once, poll this long before sleeping (BusyPoll); 0: off.
  std::uint32_t busy_poll_us = 50;
};

struct SnapshotOptions {
  std::string cache_file = "/var/lib/ibat/ibatd.cache";  // empty: no warm cache
  std::uint32_t interval_s = 300;                        // 0: only at shutdown
};

// Linux kernel integration (docs/linux.md).
struct LinuxOptions {
  bool local_sa = true;           // answer the kernel's path queries (RDMA netlink local SA)
  std::string local_sa_socket;    // "": NETLINK_RDMA; a path: an AF_UNIX datagram socket (tests, twins)
  core::Duration local_sa_deadline = std::chrono::milliseconds(1000);  // below the kernel's 2000 ms
  bool neighbours = true;         // follow the kernel's neighbour table (rtnetlink) for IPoIB entries
};

// Which HCA ports one ibatd serves ([fabric] ports, default_port).
struct PortSelection {
  std::vector<std::string> ports;  // "mlx5_0:1" or "mlx5_0"; empty: every InfiniBand port (or --ca/--port)
  std::string default_port;        // requests without a source GID; "": the first active port
};

struct DaemonConfig {
  core::Policy policy;
  fabric::FabricOptions fabric;
  PortSelection fabric_ports;
  ServerOptions server;
  SnapshotOptions snapshot;
  LinuxOptions linux_host;
  std::string log_level = "info";
};

// Command-line flags that override the file (unset: keep the file's value).
struct ConfigOverrides {
  std::optional<std::string> socket;
  std::optional<std::string> acm_socket;
  std::optional<std::string> cache_file;
  std::optional<std::string> ca;
  std::optional<std::int64_t> port;
  std::optional<std::string> log_level;
};

struct ConfigResult {
  DaemonConfig config;
  std::vector<std::string> errors;  // each names the place, the key, the value and what is accepted;
                                    // in file order, then those of the flags
  std::vector<std::string> notes;   // informational (e.g. default file absent, defaults used)
  std::string source;               // what was read: the file, or "built-in defaults (...)"
  bool ok() const { return errors.empty(); }
};

// Whether to also check what only this host can tell (admin_group exists, the directory of
// cache_file exists): on for the daemon and --check-config, off for the text alone.
enum class HostCheck : std::uint8_t { off, on };

// Parses TOML text; `source` names it in messages (a file name).
ConfigResult parse_config(std::string_view text, std::string_view source,
                          const ConfigOverrides& overrides = {}, HostCheck host = HostCheck::off);

// Reads `path` (at most 1 MiB). When `path` is the default and the file does not exist, the
// built-in defaults are used and a note says so; an explicit file that is missing is an error.
ConfigResult load_config(const std::string& path, bool path_is_explicit,
                         const ConfigOverrides& overrides = {}, HostCheck host = HostCheck::off);

// Every key as "section.key" with its value rendered as TOML, in declaration order.
struct ConfigItem {
  std::string key;
  std::string value;
  bool reloadable;  // applied by SIGHUP; otherwise needs a restart
};
std::vector<ConfigItem> describe(const DaemonConfig& config);

// Human-readable differences "key: old -> new" (with "(restart needed)" for fixed keys).
std::vector<std::string> describe_changes(const DaemonConfig& before, const DaemonConfig& after);

}  // namespace ibat::server
