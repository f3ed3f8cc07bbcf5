// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TOML configuration of ibatd: a table of key specifications (section, name, field, accepted
// range) drives parsing, validation, overrides, rendering and the SIGHUP change report, so a key
// is declared once. Errors name the place (file:line:column or the flag), the key, the value and
// what would be accepted.
#include "server/daemon/config.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <grp.h>
#include <toml++/toml.h>

namespace ibat::server {
namespace {

using namespace std::chrono;

using FieldPtr = std::variant<core::Duration*, std::uint32_t*, int*, double*, std::string*, bool*,
                              core::Pkey*, core::Prefetch*, std::vector<std::string>*, std::vector<core::IdRange>*>;

enum class IntFormat : std::uint8_t { decimal, octal, hex };
enum class StringRule : std::uint8_t { socket_path, optional_socket_path, optional_file_path,
                                       device_name, group_name, log_level, port_name, optional_port_name };

struct KeySpec {
  std::string_view section;  // empty: top level
  std::string_view name;
  FieldPtr (*field)(DaemonConfig&);
  std::int64_t int_lo = 0;
  std::int64_t int_hi = 0;
  double real_lo = 0;
  double real_hi = 0;
  core::Duration unit{0};  // for Duration fields: what one unit of the integer is
  IntFormat format = IntFormat::decimal;
  StringRule rule = StringRule::socket_path;
  bool reloadable = true;
};

constexpr std::size_t kMaxSocketPath = 107;  // sun_path holds 108 bytes including the NUL
constexpr std::size_t kMaxFilePath = 4095;
constexpr std::uintmax_t kMaxConfigBytes = 1u << 20;
constexpr std::string_view kEveryQosClass = "auto";  // qos_classes: core::every_qos_class()
constexpr std::array<std::string_view, 7> kLogLevels = {"trace", "debug", "info", "warn",
                                                         "error", "critical", "off"};

KeySpec duration_key(std::string_view section, std::string_view name,
                     FieldPtr (*field)(DaemonConfig&), core::Duration unit, std::int64_t lo,
                     std::int64_t hi, bool reloadable = true) {
  KeySpec k{section, name, field};
  k.unit = unit;
  k.int_lo = lo;
  k.int_hi = hi;
  k.reloadable = reloadable;
  return k;
}
KeySpec int_key(std::string_view section, std::string_view name, FieldPtr (*field)(DaemonConfig&),
                std::int64_t lo, std::int64_t hi, bool reloadable = true,
                IntFormat format = IntFormat::decimal) {
  KeySpec k{section, name, field};
  k.int_lo = lo;
  k.int_hi = hi;
  k.reloadable = reloadable;
  k.format = format;
  return k;
}
KeySpec real_key(std::string_view section, std::string_view name, FieldPtr (*field)(DaemonConfig&),
                 double lo, double hi) {
  KeySpec k{section, name, field};
  k.real_lo = lo;
  k.real_hi = hi;
  return k;
}
KeySpec string_key(std::string_view section, std::string_view name,
                   FieldPtr (*field)(DaemonConfig&), StringRule rule, bool reloadable) {
  KeySpec k{section, name, field};
  k.rule = rule;
  k.reloadable = reloadable;
  return k;
}
KeySpec bool_key(std::string_view section, std::string_view name, FieldPtr (*field)(DaemonConfig&),
                 bool reloadable) {
  KeySpec k{section, name, field};
  k.reloadable = reloadable;
  return k;
}

constexpr auto kSecond = core::Duration{seconds{1}};
constexpr auto kMilli = core::Duration{milliseconds{1}};
constexpr std::int64_t kDay = 86'400;

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = {
      string_key("", "log_level", [](DaemonConfig& c) -> FieldPtr { return &c.log_level; },
                 StringRule::log_level, true),
      // [policy]
      duration_key("policy", "path_ttl_s", [](DaemonConfig& c) -> FieldPtr { return &c.policy.path_ttl; },
                   kSecond, 1, 7 * kDay),
      real_key("policy", "revalidate_per_s", [](DaemonConfig& c) -> FieldPtr { return &c.policy.revalidate_per_s; },
               0.1, 1e6),
      duration_key("policy", "revalidate_jitter_ms", [](DaemonConfig& c) -> FieldPtr { return &c.policy.revalidate_jitter; },
                   kMilli, 0, 600'000),
      int_key("policy", "sa_max_inflight", [](DaemonConfig& c) -> FieldPtr { return &c.policy.sa_max_inflight; },
              1, 65'535),
      real_key("policy", "sa_rate", [](DaemonConfig& c) -> FieldPtr { return &c.policy.sa_rate; }, 0.1, 1e6),
      int_key("policy", "sa_burst", [](DaemonConfig& c) -> FieldPtr { return &c.policy.sa_burst; }, 1, 1'000'000),
      bool_key("policy", "sa_adaptive", [](DaemonConfig& c) -> FieldPtr { return &c.policy.sa_adaptive; }, true),
      duration_key("policy", "retry_base_ms", [](DaemonConfig& c) -> FieldPtr { return &c.policy.retry_base; },
                   kMilli, 1, 600'000),
      duration_key("policy", "retry_max_ms", [](DaemonConfig& c) -> FieldPtr { return &c.policy.retry_max; },
                   kMilli, 1, 3'600'000),
      int_key("policy", "retry_count", [](DaemonConfig& c) -> FieldPtr { return &c.policy.retry_count; }, 0, 32),
      real_key("policy", "retry_jitter", [](DaemonConfig& c) -> FieldPtr { return &c.policy.retry_jitter; }, 0.0, 0.9),
      duration_key("policy", "negative_ttl_ms", [](DaemonConfig& c) -> FieldPtr { return &c.policy.negative_ttl; },
                   kMilli, 0, 3'600'000),
      int_key("policy", "capacity", [](DaemonConfig& c) -> FieldPtr { return &c.policy.capacity; }, 1, 100'000'000),
      int_key("policy", "expected_subnet_ports",
              [](DaemonConfig& c) -> FieldPtr { return &c.policy.expected_subnet_ports; }, 0, 10'000'000),
      int_key("policy", "max_waiters_per_key", [](DaemonConfig& c) -> FieldPtr { return &c.policy.max_waiters_per_key; },
              1, 1'000'000),
      int_key("policy", "max_pending", [](DaemonConfig& c) -> FieldPtr { return &c.policy.max_pending; },
              1, 100'000'000),
      duration_key("policy", "request_timeout_ms", [](DaemonConfig& c) -> FieldPtr { return &c.policy.request_timeout; },
                   kMilli, 1, 3'600'000),
      duration_key("policy", "max_request_timeout_ms",
                   [](DaemonConfig& c) -> FieldPtr { return &c.policy.max_request_timeout; }, kMilli, 1, 3'600'000),
      duration_key("policy", "provisional_ttl_s", [](DaemonConfig& c) -> FieldPtr { return &c.policy.provisional_ttl; },
                   kSecond, 0, kDay),
      KeySpec{"policy", "prefetch", [](DaemonConfig& c) -> FieldPtr { return &c.policy.prefetch; }},
      real_key("policy", "in_use_window_paths_per_s",
               [](DaemonConfig& c) -> FieldPtr { return &c.policy.in_use_window_paths_per_s; }, 0.0, 1e9),
      int_key("policy", "default_pkey", [](DaemonConfig& c) -> FieldPtr { return &c.policy.default_pkey; },
              0x0001, 0xFFFF, true, IntFormat::hex),
      // An IdRange list: hex (ServiceIDs) or decimal (QoS classes) tells the two apart.
      int_key("policy", "qos_service_ids", [](DaemonConfig& c) -> FieldPtr { return &c.policy.qos_service_ids; },
              0, 0, true, IntFormat::hex),
      int_key("policy", "qos_classes", [](DaemonConfig& c) -> FieldPtr { return &c.policy.qos_classes; }, 0,
              core::kMaxQosClass),
      // [fabric]: the port is opened once, changes need a restart
      string_key("fabric", "ca", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.ca; },
                 StringRule::device_name, false),
      int_key("fabric", "port", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.port; }, 0, 254, false),
      string_key("fabric", "ports", [](DaemonConfig& c) -> FieldPtr { return &c.fabric_ports.ports; },
                 StringRule::port_name, false),
      string_key("fabric", "default_port", [](DaemonConfig& c) -> FieldPtr { return &c.fabric_ports.default_port; },
                 StringRule::optional_port_name, false),
      duration_key("fabric", "mad_timeout_ms", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.mad_timeout; },
                   kMilli, 1, 60'000, false),
      int_key("fabric", "mad_retries", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.mad_retries; }, 0, 100, false),
      duration_key("fabric", "poll_interval_ms", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.poll_interval; },
                   kMilli, 10, 3'600'000, false),
      duration_key("fabric", "sm_check_interval_s",
                   [](DaemonConfig& c) -> FieldPtr { return &c.fabric.sm_check_interval; }, kSecond, 1, kDay, false),
      duration_key("fabric", "sm_refresh_spread_ms",
                   [](DaemonConfig& c) -> FieldPtr { return &c.fabric.sm_refresh_spread; }, kMilli, 0, 600'000, false),
      int_key("fabric", "table_max_records", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.table_max_records; },
              1, 1'000'000, false),
      bool_key("fabric", "subscribe_traps", [](DaemonConfig& c) -> FieldPtr { return &c.fabric.subscribe_traps; }, false),
      // [server]
      string_key("server", "socket", [](DaemonConfig& c) -> FieldPtr { return &c.server.socket; },
                 StringRule::socket_path, false),
      string_key("server", "acm_socket", [](DaemonConfig& c) -> FieldPtr { return &c.server.acm_socket; },
                 StringRule::optional_socket_path, false),
      int_key("server", "socket_mode", [](DaemonConfig& c) -> FieldPtr { return &c.server.socket_mode; }, 0, 0777,
              false, IntFormat::octal),
      string_key("server", "admin_group", [](DaemonConfig& c) -> FieldPtr { return &c.server.admin_group; },
                 StringRule::group_name, true),
      int_key("server", "max_connections", [](DaemonConfig& c) -> FieldPtr { return &c.server.max_connections; },
              1, 65'536),
      int_key("server", "admin_share", [](DaemonConfig& c) -> FieldPtr { return &c.server.admin_share; }, 1, 64),
      int_key("server", "max_connections_per_uid",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_connections_per_uid; }, 1, 65'536),
      int_key("server", "max_outstanding_per_connection",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_outstanding_per_connection; }, 1, 1'000'000),
      int_key("server", "max_pending_per_uid",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_pending_per_uid; }, 1, 100'000'000),
      int_key("server", "max_queued_bytes_per_connection",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_queued_bytes_per_connection; }, 1 << 17,
              1 << 30),
      int_key("server", "max_queued_bytes_total",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_queued_bytes_total; }, 1 << 20, 0xFFFF'FFFFLL),
      int_key("server", "max_queued_bytes_per_uid",
              [](DaemonConfig& c) -> FieldPtr { return &c.server.max_queued_bytes_per_uid; }, 1 << 17, 0xFFFF'FFFFLL),
      bool_key("server", "shared_table", [](DaemonConfig& c) -> FieldPtr { return &c.server.shared_table; }, false),
      int_key("server", "busy_poll_us", [](DaemonConfig& c) -> FieldPtr { return &c.server.busy_poll_us; }, 0, 1000),
      // [snapshot]
      string_key("snapshot", "cache_file", [](DaemonConfig& c) -> FieldPtr { return &c.snapshot.cache_file; },
                 StringRule::optional_file_path, true),
      int_key("snapshot", "interval_s", [](DaemonConfig& c) -> FieldPtr { return &c.snapshot.interval_s; }, 0, kDay),
      // [linux]: the kernel-facing sockets are opened once, changes need a restart
      bool_key("linux", "local_sa", [](DaemonConfig& c) -> FieldPtr { return &c.linux_host.local_sa; }, false),
      string_key("linux", "local_sa_socket", [](DaemonConfig& c) -> FieldPtr { return &c.linux_host.local_sa_socket; },
                 StringRule::optional_socket_path, false),
      duration_key("linux", "local_sa_deadline_ms",
                   [](DaemonConfig& c) -> FieldPtr { return &c.linux_host.local_sa_deadline; }, kMilli, 10, 1900,
                   false),
      bool_key("linux", "neighbours", [](DaemonConfig& c) -> FieldPtr { return &c.linux_host.neighbours; }, false),
  };
  return specs;
}

// Keys renamed since a release: the old name is still read, as the new one (a packaged conffile an
// operator edited keeps the old name across an upgrade, and --check-config must not fail on it).
struct KeyAlias {
  std::string_view section;
  std::string_view old_name;
  std::string_view name;
};
constexpr std::array<KeyAlias, 1> kKeyAliases = {{
    {"policy", "table_spread_paths_per_s", "in_use_window_paths_per_s"},  // renamed in 0.2.0: it spreads no tables
}};

constexpr std::array<std::string_view, 5> kSections = {"policy", "fabric", "server", "snapshot", "linux"};

std::string full_name(const KeySpec& k) {
  return k.section.empty() ? std::string(k.name) : fmt::format("{}.{}", k.section, k.name);
}

std::string format_int(std::int64_t v, IntFormat f) {
  switch (f) {
    case IntFormat::octal: return fmt::format("0o{:o}", v);
    case IntFormat::hex: return fmt::format("0x{:04x}", v);
    case IntFormat::decimal: break;
  }
  return fmt::format("{}", v);
}

bool is_name_char(char ch, std::string_view extra) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         extra.find(ch) != std::string_view::npos;
}

bool string_ok(StringRule rule, std::string_view s) {
  auto path_ok = [&](std::size_t max) { return s.size() <= max && s.find('\0') == std::string_view::npos; };
  switch (rule) {
    case StringRule::socket_path: return !s.empty() && path_ok(kMaxSocketPath);
    case StringRule::optional_socket_path: return path_ok(kMaxSocketPath);
    case StringRule::optional_file_path: return path_ok(kMaxFilePath);
    case StringRule::device_name:
      if (s.size() > 63) return false;
      for (char ch : s) if (!is_name_char(ch, "_.-")) return false;
      return true;
    case StringRule::group_name:
      if (s.size() > 32 || (!s.empty() && s[0] == '-')) return false;
      for (char ch : s) if (!is_name_char(ch, "_.-")) return false;
      return true;
    case StringRule::log_level:
      for (auto level : kLogLevels) if (s == level) return true;
      return false;
    case StringRule::optional_port_name:
      if (s.empty()) return true;
      [[fallthrough]];
    case StringRule::port_name: {  // device or device:N, N in [1, 254]
      const std::size_t colon = s.find(':');
      const std::string_view device = s.substr(0, colon);
      if (device.empty() || !string_ok(StringRule::device_name, device)) return false;
      if (colon == std::string_view::npos) return true;
      const std::string_view number = s.substr(colon + 1);
      if (number.empty() || number.size() > 3) return false;
      int n = 0;
      for (char ch : number) {
        if (ch < '0' || ch > '9') return false;
        n = n * 10 + (ch - '0');
      }
      return n >= 1 && n <= 254;
    }
  }
  return false;
}

std::string expected(const KeySpec& k, const FieldPtr& field) {
  return std::visit(
      [&](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, double>) {
          return fmt::format("a number in [{}, {}]", k.real_lo, k.real_hi);
        } else if constexpr (std::is_same_v<T, bool>) {
          return "a boolean (true or false)";
        } else if constexpr (std::is_same_v<T, core::Prefetch>) {
          return "\"subnet\" (one GetTable per port and SM) or \"off\" (a GET per destination)";
        } else if constexpr (std::is_same_v<T, core::Pkey>) {
          return fmt::format("an integer P_Key in [{}, {}] whose low 15 bits are not all zero",
                             format_int(k.int_lo, k.format), format_int(k.int_hi, k.format));
        } else if constexpr (std::is_same_v<T, std::string>) {
          switch (k.rule) {
            case StringRule::socket_path:
              return fmt::format("a non-empty path of at most {} bytes", kMaxSocketPath);
            case StringRule::optional_socket_path:
              return fmt::format("a path of at most {} bytes, or \"\" (off)", kMaxSocketPath);
            case StringRule::optional_file_path:
              return fmt::format("a path of at most {} bytes, or \"\" (off)", kMaxFilePath);
            case StringRule::device_name:
              return "a device name of at most 63 characters [A-Za-z0-9_.-], or \"\" (first CA)";
            case StringRule::group_name:
              return "a group name of at most 32 characters [A-Za-z0-9_.-], or \"\" (root only)";
            case StringRule::log_level:
              return fmt::format("one of \"{}\"", fmt::join(kLogLevels, "\", \""));
            case StringRule::port_name:
            case StringRule::optional_port_name:
              return "a port as \"device:port\" (\"mlx5_0:1\"; \"mlx5_0\" for its only port), or \"\" (the first active port)";
          }
          return "a string";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return "an array of ports as \"device:port\" ([\"mlx5_0:1\", \"mlx5_3:1\"]), or [] (every InfiniBand port)";
        } else if constexpr (std::is_same_v<T, std::vector<core::IdRange>>) {
          if (k.format == IntFormat::hex)
            return "an array of ServiceIDs, ranges or ULP names ([\"iser\", \"nfs-rdma\", \"rds\", \"sdp\", "
                   "\"0x1060cbc\", \"0x10000-0x1ffff\"]), or [] (none kept apart)";
          return "\"auto\" (every class but 0, each asked by a table of its own), an array of QoS classes 0-4095 "
                 "or ranges ([4, \"8-15\"]), or [] (none kept apart)";
        } else {
          return fmt::format("an integer in [{}, {}]", format_int(k.int_lo, k.format),
                             format_int(k.int_hi, k.format));
        }
      },
      field);
}

// A TOML basic string: double quotes, with quotes, backslashes and control characters escaped.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(ch));
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// The value as the user wrote it (integers keep their hex/octal form), cut to a readable length.
std::string render_node(const toml::node& node) {
  std::string text;
  if (const auto* s = node.as_string()) {
    text = quote(s->get());
  } else if (const auto* d = node.as_floating_point()) {
    text = fmt::format("{}", d->get());
  } else if (node.is_table()) {
    text = "a table";
  } else if (node.is_array()) {
    text = "an array";
  } else {
    std::ostringstream os;
    node.visit([&](const auto& n) { os << n; });
    text = os.str();
  }
  constexpr std::size_t kMaxShown = 80;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

std::string where(const toml::node& node, std::string_view source) {
  const auto& pos = node.source().begin;
  if (pos.line == 0) return std::string(source);
  return fmt::format("{}:{}:{}", source, pos.line, pos.column);
}

// Where a key was set: "file:line:col" or the flag, and its rank in file order (flags after).
struct Place {
  std::string where;
  std::uint64_t order = 0;
};
constexpr std::uint64_t kAfterFile = UINT64_MAX;

Place place_of(const toml::node& node, std::string_view source) {
  const auto& pos = node.source().begin;
  return {where(node, source), (std::uint64_t{pos.line} << 32) | pos.column};
}

// What parsing collects: the errors with their rank (reported in file order) and where each
// valid or invalid key was set, for the checks that involve several keys.
struct Parse {
  DaemonConfig config;
  std::vector<std::pair<std::uint64_t, std::string>> errors;
  std::map<std::string, Place, std::less<>> places;
  std::vector<std::string> bad_keys;

  void error(std::uint64_t order, std::string text) { errors.emplace_back(order, std::move(text)); }
  bool bad(std::string_view key) const { return std::find(bad_keys.begin(), bad_keys.end(), key) != bad_keys.end(); }
  // Where `key` was set, else where `other` was, else `fallback` (a default on both sides).
  Place place(std::string_view key, std::string_view other, std::string_view fallback) const {
    if (auto it = places.find(key); it != places.end()) return it->second;
    if (auto it = places.find(other); it != places.end()) return it->second;
    return {std::string(fallback), 0};
  }
  std::vector<std::string> sorted_errors() {
    std::stable_sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (auto& e : errors) out.push_back(std::move(e.second));
    return out;
  }
};

// Stores `node` into the field of `k`, or returns why it is not acceptable.
bool apply_value(const KeySpec& k, const toml::node& node, DaemonConfig& config) {
  FieldPtr field = k.field(config);
  return std::visit(
      [&](auto* p) -> bool {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, double>) {
          if (!node.is_number()) return false;
          double v = node.is_integer() ? static_cast<double>(*node.value<std::int64_t>())
                                       : *node.value<double>();
          if (!std::isfinite(v) || v < k.real_lo || v > k.real_hi) return false;
          *p = v;
          return true;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (!node.is_boolean()) return false;
          *p = *node.value<bool>();
          return true;
        } else if constexpr (std::is_same_v<T, core::Prefetch>) {
          if (!node.is_string()) return false;
          std::optional<core::Prefetch> v = core::prefetch_from_string(node.as_string()->get());
          if (!v) return false;
          *p = *v;
          return true;
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (!node.is_string()) return false;
          const std::string& s = node.as_string()->get();
          if (!string_ok(k.rule, s)) return false;
          *p = s;
          return true;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          const toml::array* array = node.as_array();
          if (!array || array->size() > 255) return false;
          std::vector<std::string> values;
          for (const toml::node& item : *array) {
            if (!item.is_string() || !string_ok(k.rule, item.as_string()->get())) return false;
            values.push_back(item.as_string()->get());
          }
          *p = std::move(values);
          return true;
        } else if constexpr (std::is_same_v<T, std::vector<core::IdRange>>) {
          if (k.format != IntFormat::hex && node.is_string() && node.as_string()->get() == kEveryQosClass) {
            *p = core::every_qos_class();
            return true;
          }
          const toml::array* array = node.as_array();
          if (!array || array->size() > 255) return false;
          std::vector<core::IdRange> ranges;
          for (const toml::node& item : *array) {
            std::optional<core::IdRange> range;
            if (item.is_string()) {
              const std::string& text = item.as_string()->get();
              range = k.format == IntFormat::hex ? core::parse_service_ids(text) : core::parse_qos_classes(text);
            } else if (item.is_integer() && item.as_integer()->get() >= 0) {
              const auto v = static_cast<std::uint64_t>(item.as_integer()->get());
              if (k.format == IntFormat::hex || v <= static_cast<std::uint64_t>(k.int_hi)) range = core::IdRange{v, v};
            }
            if (!range) return false;
            ranges.push_back(*range);
          }
          *p = std::move(ranges);
          return true;
        } else {
          if (!node.is_integer()) return false;
          std::int64_t v = node.as_integer()->get();
          if (v < k.int_lo || v > k.int_hi) return false;
          if constexpr (std::is_same_v<T, core::Duration>) {
            *p = k.unit * v;
          } else if constexpr (std::is_same_v<T, core::Pkey>) {
            core::Pkey pkey{static_cast<std::uint16_t>(v)};
            if (!pkey.is_valid()) return false;
            *p = pkey;
          } else {
            *p = static_cast<T>(v);
          }
          return true;
        }
      },
      field);
}

void apply_key(const KeySpec& k, const toml::node& node, const Place& place, Parse& parse) {
  std::string name = full_name(k);
  // TOML refuses a key set twice; a key and its old name (kKeyAliases) are refused here.
  if (auto seen = parse.places.find(name); seen != parse.places.end() && place.order != kAfterFile) {
    parse.error(place.order, fmt::format("{}: {} is set twice (also at {}; one of them by its old name): keep one",
                                         place.where, name, seen->second.where));
    return;
  }
  parse.places[name] = place;
  if (!apply_value(k, node, parse.config)) {
    parse.bad_keys.push_back(name);
    parse.error(place.order, fmt::format("{}: {} = {}: expected {}", place.where, name, render_node(node),
                                         expected(k, k.field(parse.config))));
  }
}

const KeySpec* find_spec(std::string_view section, std::string_view name) {
  for (const auto& alias : kKeyAliases) {
    if (alias.section == section && alias.old_name == name) name = alias.name;
  }
  for (const auto& k : key_specs()) {
    if (k.section == section && k.name == name) return &k;
  }
  return nullptr;
}

std::string known_keys(std::string_view section) {
  std::vector<std::string_view> names;
  for (const auto& k : key_specs()) {
    if (k.section == section) names.push_back(k.name);
  }
  if (section.empty()) names.insert(names.end(), kSections.begin(), kSections.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

bool is_section(std::string_view name) {
  for (auto s : kSections) if (s == name) return true;
  return false;
}

void apply_table(const toml::table& root, std::string_view source, Parse& parse) {
  for (auto&& [key, node] : root) {
    std::string_view name = key.str();
    if (const KeySpec* k = find_spec("", name)) {
      apply_key(*k, node, place_of(node, source), parse);
      continue;
    }
    if (!is_section(name)) {
      parse.error(place_of(node, source).order, fmt::format("{}: unknown key '{}' (accepted at the top level: {})",
                                                             where(node, source), name, known_keys("")));
      continue;
    }
    const toml::table* section = node.as_table();
    if (section == nullptr) {
      parse.error(place_of(node, source).order, fmt::format("{}: {} = {}: expected a table [{}]", where(node, source),
                                                             name, render_node(node), name));
      continue;
    }
    for (auto&& [sub_key, sub_node] : *section) {
      if (const KeySpec* k = find_spec(name, sub_key.str())) {
        apply_key(*k, sub_node, place_of(sub_node, source), parse);
      } else {
        parse.error(place_of(sub_node, source).order,
                    fmt::format("{}: unknown key '{}.{}' (accepted in [{}]: {})", where(sub_node, source), name,
                                sub_key.str(), name, known_keys(name)));
      }
    }
  }
}

void apply_overrides(const ConfigOverrides& o, Parse& parse) {
  auto apply = [&](std::string_view flag, std::string_view section, std::string_view name,
                   const auto& value) {
    if (!value) return;
    toml::value node(*value);
    apply_key(*find_spec(section, name), node, Place{std::string(flag), kAfterFile}, parse);
  };
  apply("--socket", "server", "socket", o.socket);
  apply("--acm-socket", "server", "acm_socket", o.acm_socket);
  apply("--cache-file", "snapshot", "cache_file", o.cache_file);
  apply("--ca", "fabric", "ca", o.ca);
  apply("--port", "fabric", "port", o.port);
  apply("--log-level", "", "log_level", o.log_level);
}

// Checks between keys, each reported at the key that was set (the later one when both were),
// skipped when one of the keys already has its own error.
void check_across_keys(std::string_view source, Parse& parse) {
  const DaemonConfig& c = parse.config;
  if (!parse.bad("policy.retry_base_ms") && !parse.bad("policy.retry_max_ms") &&
      c.policy.retry_max < c.policy.retry_base) {
    Place at = parse.place("policy.retry_max_ms", "policy.retry_base_ms", source);
    parse.error(at.order, fmt::format("{}: policy.retry_max_ms = {}: must be >= policy.retry_base_ms ({})", at.where,
                                      c.policy.retry_max / kMilli, c.policy.retry_base / kMilli));
  }
  if (!parse.bad("server.socket") && !parse.bad("server.acm_socket") && c.server.acm_socket == c.server.socket) {
    Place at = parse.place("server.acm_socket", "server.socket", source);
    parse.error(at.order, fmt::format("{}: server.acm_socket = {}: must differ from server.socket (one path "
                                      "cannot serve both protocols)", at.where, quote(c.server.acm_socket)));
  }
  if (!parse.errors.empty()) return;  // the whole-policy check only makes sense on valid fields
  std::string problem = c.policy.validate();
  if (!problem.empty()) parse.error(kAfterFile, fmt::format("{}: [policy]: {}", source, problem));
}

// What only this host can tell: the admin group exists, the snapshot's directory exists or can be
// made (ibatd creates its last component at start, as systemd's StateDirectory would).
void check_host(std::string_view source, Parse& parse) {
  const DaemonConfig& c = parse.config;
  if (!c.server.admin_group.empty() && !parse.bad("server.admin_group")) {
    group g{};
    group* found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrnam_r(c.server.admin_group.c_str(), &g, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
      Place at = parse.place("server.admin_group", "", source);
      parse.error(at.order, fmt::format("{}: server.admin_group = {}: no such group (create it with 'groupadd {}', "
                                        "or set \"\" for root only)", at.where, quote(c.server.admin_group),
                                        c.server.admin_group));
    }
  }
  if (!c.snapshot.cache_file.empty() && !parse.bad("snapshot.cache_file")) {
    std::filesystem::path dir = std::filesystem::path(c.snapshot.cache_file).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec) &&
        !std::filesystem::is_directory(dir.parent_path(), ec)) {
      Place at = parse.place("snapshot.cache_file", "", source);
      parse.error(at.order, fmt::format("{}: snapshot.cache_file = {}: directory {} does not exist (create it, or "
                                        "set \"\" to run without a warm cache)", at.where,
                                        quote(c.snapshot.cache_file), dir.string()));
    }
  }
}

ConfigResult finish(Parse& parse, std::string_view source, HostCheck host) {
  check_across_keys(source, parse);
  if (host == HostCheck::on) check_host(source, parse);
  ConfigResult result;
  result.config = parse.config;
  result.errors = parse.sorted_errors();
  result.source = std::string(source);
  return result;
}

std::string render_field(const KeySpec& k, const DaemonConfig& config) {
  DaemonConfig copy = config;
  return std::visit(
      [&](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, double>) {
          return fmt::format("{}", *p);
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else if constexpr (std::is_same_v<T, core::Prefetch>) {
          return quote(core::to_string(*p));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(*p);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::vector<std::string> quoted;
          for (const std::string& v : *p) quoted.push_back(quote(v));
          return fmt::format("[{}]", fmt::join(quoted, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<core::IdRange>>) {
          if (k.format != IntFormat::hex && *p == core::every_qos_class()) return quote(kEveryQosClass);
          std::vector<std::string> quoted;
          for (const core::IdRange& r : *p)
            quoted.push_back(quote(k.format == IntFormat::hex ? core::service_ids_name(r) : core::to_string(r, false)));
          return fmt::format("[{}]", fmt::join(quoted, ", "));
        } else if constexpr (std::is_same_v<T, core::Duration>) {
          return fmt::format("{}", *p / k.unit);
        } else if constexpr (std::is_same_v<T, core::Pkey>) {
          return format_int(p->value, k.format);
        } else {
          return format_int(static_cast<std::int64_t>(*p), k.format);
        }
      },
      k.field(copy));
}

}  // namespace

ConfigResult parse_config(std::string_view text, std::string_view source, const ConfigOverrides& overrides,
                          HostCheck host) {
  Parse parse;
  try {
    toml::table root = toml::parse(text, source);
    apply_table(root, source, parse);
  } catch (const toml::parse_error& e) {
    const auto& pos = e.source().begin;
    ConfigResult result;
    result.errors.push_back(fmt::format("{}:{}:{}: TOML syntax error: {}", source, pos.line,
                                        pos.column, e.description()));
    result.source = std::string(source);
    return result;
  }
  apply_overrides(overrides, parse);
  return finish(parse, source, host);
}

ConfigResult load_config(const std::string& path, bool path_is_explicit, const ConfigOverrides& overrides,
                         HostCheck host) {
  std::error_code ec;
  bool exists = std::filesystem::exists(path, ec);
  if (!exists && !path_is_explicit && !ec) {
    Parse parse;
    apply_overrides(overrides, parse);
    ConfigResult result = finish(parse, fmt::format("built-in defaults ({} does not exist)", path), host);
    result.notes.push_back(fmt::format("{} does not exist: using built-in defaults", path));
    return result;
  }
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    ConfigResult result;
    result.errors.push_back(fmt::format("{}: cannot read: {}", path, ec.message()));
    result.source = path;
    return result;
  }
  if (size > kMaxConfigBytes) {
    ConfigResult result;
    result.errors.push_back(fmt::format("{}: {} bytes: a config file may have at most {} bytes",
                                        path, size, kMaxConfigBytes));
    result.source = path;
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) {
    ConfigResult result;
    result.errors.push_back(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    result.source = path;
    return result;
  }
  return parse_config(text, path, overrides, host);
}

std::vector<ConfigItem> describe(const DaemonConfig& config) {
  std::vector<ConfigItem> items;
  for (const auto& k : key_specs()) {
    items.push_back({full_name(k), render_field(k, config), k.reloadable});
  }
  return items;
}

std::vector<std::string> describe_changes(const DaemonConfig& before, const DaemonConfig& after) {
  std::vector<ConfigItem> a = describe(before);
  std::vector<ConfigItem> b = describe(after);
  std::vector<std::string> changes;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].value == b[i].value) continue;
    changes.push_back(fmt::format("{}: {} -> {}{}", a[i].key, a[i].value, b[i].value,
                                  a[i].reloadable ? "" : " (restart needed)"));
  }
  return changes;
}

}  // namespace ibat::server
