// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Tests of ibatd's TOML config: defaults, every key type, every error path (each message must
// name the place, the key, the value and the accepted range), flag overrides, the SIGHUP change
// report, and that packaging/ibatd.toml documents exactly the built-in defaults.
#include "server/daemon/config.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::string only_error(const ConfigResult& r) {
  EXPECT_EQ(r.errors.size(), 1u);
  return r.errors.empty() ? std::string() : r.errors.front();
}

TEST(Config, EmptyTextGivesDefaults) {
  ConfigResult r = parse_config("", "empty.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.server.socket, "/run/ibat/ibatd.sock");
  EXPECT_EQ(r.config.server.acm_socket, "/run/ibat/acm.sock");
  EXPECT_EQ(r.config.policy.path_ttl, core::Policy{}.path_ttl);
  EXPECT_EQ(r.config.log_level, "info");
}

TEST(Config, EveryKindOfKeyIsRead) {
  ConfigResult r = parse_config(R"(
log_level = "debug"
[policy]
path_ttl_s = 60
retry_base_ms = 100
sa_rate = 50          # an integer is accepted for a number
retry_jitter = 0.5
default_pkey = 0x8001
[fabric]
ca = "mlx5_0"
port = 2
mad_timeout_ms = 300
subscribe_traps = false
[server]
socket = "/tmp/x.sock"
acm_socket = "/tmp/acm.sock"
socket_mode = 0o660
admin_group = "ibat"
admin_share = 4
max_outstanding_per_connection = 7
max_queued_bytes_per_uid = 1048576
[snapshot]
cache_file = ""
interval_s = 0
)", "all.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  const DaemonConfig& c = r.config;
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.policy.path_ttl, 60s);
  EXPECT_EQ(c.policy.retry_base, 100ms);
  EXPECT_DOUBLE_EQ(c.policy.sa_rate, 50.0);
  EXPECT_DOUBLE_EQ(c.policy.retry_jitter, 0.5);
  EXPECT_EQ(c.policy.default_pkey.value, 0x8001);
  EXPECT_EQ(c.fabric.ca, "mlx5_0");
  EXPECT_EQ(c.fabric.port, 2);
  EXPECT_EQ(c.fabric.mad_timeout, 300ms);
  EXPECT_FALSE(c.fabric.subscribe_traps);
  EXPECT_EQ(c.server.socket, "/tmp/x.sock");
  EXPECT_EQ(c.server.acm_socket, "/tmp/acm.sock");
  EXPECT_EQ(c.server.socket_mode, 0660u);
  EXPECT_EQ(c.server.admin_group, "ibat");
  EXPECT_EQ(c.server.max_outstanding_per_connection, 7u);
  EXPECT_EQ(c.server.admin_share, 4u);
  EXPECT_EQ(c.server.max_queued_bytes_per_uid, 1u << 20);
  EXPECT_EQ(c.snapshot.cache_file, "");
  EXPECT_EQ(c.snapshot.interval_s, 0u);
}

TEST(Config, OutOfRangeIntegerNamesPlaceKeyValueAndRange) {
  std::string e = only_error(parse_config("[policy]\n\npath_ttl_s = 0\n", "/etc/ibat/x.toml"));
  EXPECT_THAT(e, HasSubstr("/etc/ibat/x.toml:3:14"));
  EXPECT_THAT(e, HasSubstr("policy.path_ttl_s = 0"));
  EXPECT_THAT(e, HasSubstr("an integer in [1, 604800]"));
  e = only_error(parse_config("[fabric]\nport = 255\n", "f.toml"));
  EXPECT_THAT(e, HasSubstr("fabric.port = 255: expected an integer in [0, 254]"));
  e = only_error(parse_config("[server]\nadmin_share = 0\n", "s.toml"));
  EXPECT_THAT(e, HasSubstr("server.admin_share = 0: expected an integer in [1, 64]"));
}

// One uid's share of pending requests: at least one request (0 would refuse every resolve), at most
// policy.max_pending's own bound; the default leaves half of the default max_pending to others.
TEST(Config, MaxPendingPerUidIsReadAndOutsideItsRangeAnErrorNamingIt) {
  EXPECT_EQ(DaemonConfig{}.server.max_pending_per_uid * 2, core::Policy{}.max_pending);
  ConfigResult r = parse_config("[server]\nmax_pending_per_uid = 100\n", "s.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.server.max_pending_per_uid, 100u);
  EXPECT_THAT(only_error(parse_config("[server]\nmax_pending_per_uid = 0\n", "s.toml")),
              HasSubstr("s.toml:2:23: server.max_pending_per_uid = 0: expected an integer in [1, 100000000]"));
  EXPECT_THAT(only_error(parse_config("[server]\nmax_pending_per_uid = 100000001\n", "s.toml")),
              HasSubstr("server.max_pending_per_uid = 100000001: expected an integer in [1, 100000000]"));
  EXPECT_THAT(only_error(parse_config("[server]\nmax_pending_per_uid = -1\n", "s.toml")),
              HasSubstr("server.max_pending_per_uid = -1: expected an integer in [1, 100000000]"));
  EXPECT_THAT(only_error(parse_config("[server]\nmax_pending_per_uid = \"half\"\n", "s.toml")),
              HasSubstr("server.max_pending_per_uid = \"half\": expected an integer in [1, 100000000]"));
}

TEST(Config, WrongTypeIsAnError) {
  EXPECT_THAT(only_error(parse_config("[policy]\ncapacity = \"many\"\n", "t.toml")),
              HasSubstr("policy.capacity = \"many\": expected an integer in [1, 100000000]"));
  EXPECT_THAT(only_error(parse_config("[policy]\ncapacity = 1.5\n", "t.toml")),
              HasSubstr("policy.capacity = 1.5"));
  EXPECT_THAT(only_error(parse_config("[fabric]\nsubscribe_traps = 1\n", "t.toml")),
              HasSubstr("fabric.subscribe_traps = 1: expected a boolean"));
  EXPECT_THAT(only_error(parse_config("[server]\nsocket = 5\n", "t.toml")),
              HasSubstr("server.socket = 5: expected a non-empty path of at most 107 bytes"));
  EXPECT_THAT(only_error(parse_config("[policy]\nsa_rate = \"fast\"\n", "t.toml")),
              HasSubstr("policy.sa_rate = \"fast\": expected a number in [0.1, 1000000]"));
}

TEST(Config, NumberRangeAndNonFiniteAreRejected) {
  EXPECT_THAT(only_error(parse_config("[policy]\nretry_jitter = 0.95\n", "t.toml")),
              HasSubstr("policy.retry_jitter = 0.95: expected a number in [0, 0.9]"));
  EXPECT_THAT(only_error(parse_config("[policy]\nsa_rate = nan\n", "t.toml")),
              HasSubstr("policy.sa_rate = nan"));
  EXPECT_THAT(only_error(parse_config("[policy]\nrevalidate_per_s = inf\n", "t.toml")),
              HasSubstr("policy.revalidate_per_s = inf"));
  EXPECT_THAT(only_error(parse_config("[policy]\nin_use_window_paths_per_s = -1\n", "t.toml")),
              HasSubstr("policy.in_use_window_paths_per_s = -1"));
  EXPECT_THAT(only_error(parse_config("[policy]\nexpected_subnet_ports = -1\n", "t.toml")),
              HasSubstr("policy.expected_subnet_ports = -1: expected an integer in [0, 10000000]"));
  EXPECT_THAT(only_error(parse_config("[policy]\nin_use_window_paths_per_s = 500\n", "t.toml")),
              HasSubstr("in_use_window_paths_per_s must be 0 or in [1000, 1000000000]"));
}

// The SaPacer can be turned off (the token bucket alone), as the simulator's --pace fixed does.
TEST(Config, SaAdaptiveIsAKey) {
  auto r = parse_config("[policy]\nsa_adaptive = false\n", "t.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_FALSE(r.config.policy.sa_adaptive);
  EXPECT_TRUE(parse_config("", "t.toml").config.policy.sa_adaptive);
}

// An upgraded host's edited conffile keeps the key's name before 0.2.0: it is read as the new key,
// its errors name the new key, and setting both is an error naming both places.
TEST(Config, RenamedKeyIsReadByItsOldName) {
  auto old_name = parse_config("[policy]\ntable_spread_paths_per_s = 125000\n", "t.toml");
  ASSERT_TRUE(old_name.errors.empty()) << old_name.errors.front();
  EXPECT_EQ(old_name.config.policy.in_use_window_paths_per_s, 125000.0);
  EXPECT_THAT(only_error(parse_config("[policy]\ntable_spread_paths_per_s = 500\n", "t.toml")),
              HasSubstr("in_use_window_paths_per_s must be 0 or in [1000, 1000000000]"));
  EXPECT_THAT(only_error(parse_config("[policy]\nin_use_window_paths_per_s = 125000\ntable_spread_paths_per_s = 125000\n",
                                      "t.toml")),
              HasSubstr("t.toml:3:28: policy.in_use_window_paths_per_s is set twice (also at t.toml:2:29"));
}

TEST(Config, PkeyWithZeroBaseIsRejected) {
  EXPECT_THAT(only_error(parse_config("[policy]\ndefault_pkey = 0x8000\n", "t.toml")),
              HasSubstr("policy.default_pkey = 0x8000: expected an integer P_Key in [0x0001, 0xffff]"));
}

TEST(Config, StringRulesAreEnforced) {
  EXPECT_THAT(only_error(parse_config("log_level = \"loud\"\n", "t.toml")),
              HasSubstr("log_level = \"loud\": expected one of \"trace\", \"debug\", \"info\""));
  EXPECT_THAT(only_error(parse_config("[server]\nsocket = \"\"\n", "t.toml")),
              HasSubstr("server.socket = \"\""));
  std::string long_path = "/" + std::string(107, 'a');
  EXPECT_THAT(only_error(parse_config("[server]\nacm_socket = \"" + long_path + "\"\n", "t.toml")),
              HasSubstr("expected a path of at most 107 bytes, or \"\" (off)"));
  EXPECT_THAT(only_error(parse_config("[fabric]\nca = \"mlx5 0\"\n", "t.toml")),
              HasSubstr("fabric.ca = \"mlx5 0\": expected a device name"));
  EXPECT_THAT(only_error(parse_config("[server]\nadmin_group = \"-wheel\"\n", "t.toml")),
              HasSubstr("server.admin_group = \"-wheel\": expected a group name"));
  EXPECT_THAT(only_error(parse_config("[server]\nsocket_mode = 0o1777\n", "t.toml")),
              HasSubstr("server.socket_mode = 0o1777: expected an integer in [0o0, 0o777]"));
}

TEST(Config, PortsAreAListOfDevicePortNamesAndTheDefaultOneOfThem) {
  ConfigResult r = parse_config("[fabric]\nports = [\"mlx5_0:1\", \"mlx5_3\"]\ndefault_port = \"mlx5_3:1\"\n", "p.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.fabric_ports.ports, (std::vector<std::string>{"mlx5_0:1", "mlx5_3"}));
  EXPECT_EQ(r.config.fabric_ports.default_port, "mlx5_3:1");
  EXPECT_TRUE(parse_config("[fabric]\nports = []\n", "p.toml").ok());
  for (const char* bad : {"[\"mlx5_0:0\"]", "[\"mlx5_0:255\"]", "[\":1\"]", "[\"mlx5 0:1\"]", "[1]", "\"mlx5_0:1\""})
    EXPECT_THAT(only_error(parse_config(std::string("[fabric]\nports = ") + bad + "\n", "p.toml")),
                HasSubstr("expected an array of ports as \"device:port\""))
        << bad;
  EXPECT_THAT(only_error(parse_config("[fabric]\ndefault_port = \"mlx5_0:x\"\n", "p.toml")),
              HasSubstr("fabric.default_port = \"mlx5_0:x\": expected a port as \"device:port\""));
}

TEST(Config, QosRangesAreServiceIdsOrUlpNamesAndTwelveBitClasses) {
  ConfigResult r = parse_config(
      "[policy]\nqos_service_ids = [\"iser\", \"0x10000-0x1ffff\", 17]\nqos_classes = [4, \"8-15\"]\n", "q.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.policy.qos_service_ids,
            (std::vector<core::IdRange>{{0x1060CBC, 0x1060CBC}, {0x10000, 0x1FFFF}, {17, 17}}));
  EXPECT_EQ(r.config.policy.qos_classes, (std::vector<core::IdRange>{{4, 4}, {8, 15}}));
  // Rendered back as a file would say it (ULP names where a range is one).
  std::string rendered;
  for (const ConfigItem& item : describe(r.config))
    if (item.key == "policy.qos_service_ids") rendered = item.value;
  EXPECT_EQ(rendered, "[\"iser\", \"sdp\", \"0x11\"]");
  for (const char* bad : {"[\"iscsi\"]", "[\"0x20-0x10\"]", "[-1]", "\"iser\""})
    EXPECT_THAT(only_error(parse_config(std::string("[policy]\nqos_service_ids = ") + bad + "\n", "q.toml")),
                HasSubstr("expected an array of ServiceIDs, ranges or ULP names"))
        << bad;
  for (const char* bad : {"[4096]", "\"all\"", "\"0x1060cbc\""})
    EXPECT_THAT(only_error(parse_config(std::string("[policy]\nqos_classes = ") + bad + "\n", "q.toml")),
                HasSubstr("expected \"auto\" (every class but 0, each asked by a table of its own), an array of "
                          "QoS classes 0-4095"))
        << bad;
  EXPECT_TRUE(parse_config("[policy]\nqos_service_ids = []\n", "q.toml").ok());
  EXPECT_THAT(only_error(parse_config("[policy]\nqos_service_ids = \"auto\"\n", "q.toml")),
              HasSubstr("expected an array of ServiceIDs"));  // "auto" names QoS classes only
}

TEST(Config, QosClassesAutoIsEveryClassButZeroAndRendersBackAsAuto) {
  ConfigResult r = parse_config("[policy]\nqos_classes = \"auto\"\n", "q.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.policy.qos_classes, (std::vector<core::IdRange>{{1, 4095}}));
  std::string rendered;
  for (const ConfigItem& item : describe(r.config))
    if (item.key == "policy.qos_classes") rendered = item.value;
  EXPECT_EQ(rendered, "\"auto\"");
  r = parse_config("[policy]\nqos_classes = []\n", "q.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.config.policy.qos_classes.empty());
}

TEST(Config, UnknownKeysAndTablesAreErrorsListingTheAcceptedOnes) {
  std::string e = only_error(parse_config("[policy]\npath_ttl = 5\n", "t.toml"));
  EXPECT_THAT(e, HasSubstr("t.toml:2:12: unknown key 'policy.path_ttl'"));
  EXPECT_THAT(e, HasSubstr("path_ttl_s"));
  e = only_error(parse_config("[daemon]\nx = 1\n", "t.toml"));
  EXPECT_THAT(e, HasSubstr("unknown key 'daemon'"));
  EXPECT_THAT(e, HasSubstr("policy, fabric, server, snapshot"));
  EXPECT_THAT(only_error(parse_config("policy = 3\n", "t.toml")),
              HasSubstr("policy = 3: expected a table [policy]"));
}

TEST(Config, AllErrorsOfAFileAreReported) {
  ConfigResult r = parse_config("[policy]\ncapacity = 0\nsa_burst = 0\nbogus = 1\n", "t.toml");
  EXPECT_EQ(r.errors.size(), 3u);
}

TEST(Config, SyntaxErrorNamesThePlace) {
  std::string e = only_error(parse_config("[policy\n", "t.toml"));
  EXPECT_THAT(e, HasSubstr("t.toml:1:"));
  EXPECT_THAT(e, HasSubstr("TOML syntax error"));
}

TEST(Config, CrossKeyErrorsNameTheKeysAndThePlace) {
  std::string e = only_error(parse_config("[policy]\nretry_base_ms = 600000\nretry_max_ms = 1\n", "t.toml"));
  EXPECT_EQ(e, "t.toml:3:16: policy.retry_max_ms = 1: must be >= policy.retry_base_ms (600000)");
  // Only the base in the file: the error is where it was set.
  EXPECT_EQ(only_error(parse_config("[policy]\nretry_base_ms = 600000\n", "t.toml")),
            "t.toml:2:17: policy.retry_max_ms = 8000: must be >= policy.retry_base_ms (600000)");
}

TEST(Config, CrossKeyAndPerKeyErrorsComeTogetherInFileOrder) {
  ConfigOverrides o;
  o.socket = "/tmp/s";
  ConfigResult r = parse_config("[server]\nacm_socket = \"/tmp/s\"\n[policy]\nretry_max_ms = 1\ncapacity = 0\n"
                                "retry_base_ms = 2\n[fabric]\nport = 999\n",
                                "t.toml", o);
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_THAT(r.errors[0], HasSubstr("t.toml:2:14: server.acm_socket = \"/tmp/s\": must differ from server.socket"));
  EXPECT_THAT(r.errors[1], HasSubstr("t.toml:4:16: policy.retry_max_ms = 1: must be >= policy.retry_base_ms (2)"));
  EXPECT_THAT(r.errors[2], HasSubstr("t.toml:5:12: policy.capacity = 0"));
  EXPECT_THAT(r.errors[3], HasSubstr("t.toml:8:8: fabric.port = 999"));
}

TEST(Config, HostChecksFindAMissingGroupAndSnapshotDirectory) {
  std::string text = "[server]\nadmin_group = \"no-such-group-ibat\"\n[snapshot]\ncache_file = \"/nonexistent/d/c\"\n";
  EXPECT_TRUE(parse_config(text, "t.toml").ok()) << "the text alone is valid";
  ConfigResult r = parse_config(text, "t.toml", {}, HostCheck::on);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_THAT(r.errors[0], HasSubstr("t.toml:2:15: server.admin_group = \"no-such-group-ibat\": no such group"));
  EXPECT_THAT(r.errors[1], HasSubstr("t.toml:4:14: snapshot.cache_file = \"/nonexistent/d/c\": directory "
                                     "/nonexistent/d does not exist"));
  EXPECT_TRUE(parse_config("[server]\nadmin_group = \"root\"\n[snapshot]\ncache_file = \"/tmp/c\"\n", "t.toml", {},
                           HostCheck::on)
                  .ok());
  // Only the last directory missing: ibatd creates it at start (the default /var/lib/ibat by hand).
  EXPECT_TRUE(parse_config("[snapshot]\ncache_file = \"/tmp/ibat-no-such-dir-yet/c\"\n", "t.toml", {}, HostCheck::on)
                  .ok());
}

// Hostile files a local attacker might hope ibatd would half-read: each is refused, naming the
// file and the line of the offence.
TEST(Config, HostileFilesAreRejectedWithFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"[policy]\ncapacity = 99999999999999999999\n", "t.toml:2:"},  // beyond int64
      {"[policy]\ncapacity = -1\n", "t.toml:2:"},
      {"[policy]\ncapacity = 1e400\n", "t.toml:2:"},
      {"[policy]\nsa_rate = nan\n", "t.toml:2:"},
      {"[policy]\nsa_rate = inf\n", "t.toml:2:"},
      {"[policy]\ncapacity = \"100\"\n", "t.toml:2:"},
      {"[policy]\ncapacity = [1, 2]\n", "t.toml:2:"},
      {"[policy]\ncapacity = { a = 1 }\n", "t.toml:2:"},
      {"[policy]\ncapacity = 1\ncapacity = 2\n", "t.toml:3:"},  // duplicate key
      {"[policy]\n[policy]\n", "t.toml:2:"},                      // duplicate table
      {"[server]\nsocket = \"unterminated\n", "t.toml:2:"},
      {"[server]\nsocket = \"a\u0000b\"\n", "t.toml:2:"},
      {"\n\n[policy.deep.deeper]\nx = 1\n", "t.toml:3:"},
      {"[policy]\ndefault_pkey = 0x0000\n", "t.toml:2:"},
      {"[policy]\nretry_jitter = 1.5\n", "t.toml:2:"},
      {"[fabric]\nport = 255\n", "t.toml:2:"},
  };
  for (const auto& [text, place] : cases) {
    ConfigResult r = parse_config(text, "t.toml");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_THAT(r.errors.front(), HasSubstr(place)) << text;
  }
}

TEST(Config, MaxRequestTimeoutIsReadAndMustCoverTheDefaultDeadline) {
  ConfigResult r = parse_config("[policy]\nmax_request_timeout_ms = 20000\n", "t.toml");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.policy.max_request_timeout, 20s);
  std::string e = only_error(parse_config("[policy]\nrequest_timeout_ms = 9000\nmax_request_timeout_ms = 8000\n", "t.toml"));
  EXPECT_THAT(e, HasSubstr("t.toml: [policy]: max_request_timeout must be >= request_timeout"));
  EXPECT_THAT(only_error(parse_config("[policy]\nmax_request_timeout_ms = 0\n", "t.toml")),
              HasSubstr("max_request_timeout_ms"));
}

TEST(Config, FlagsOverrideTheFile) {
  ConfigOverrides o;
  o.socket = "/tmp/flag.sock";
  o.acm_socket = "/tmp/flag-acm.sock";
  o.cache_file = "/tmp/cache";
  o.ca = "mlx4_1";
  o.port = 2;
  o.log_level = "warn";
  ConfigResult r = parse_config("[server]\nsocket = \"/tmp/file.sock\"\n[fabric]\nport = 1\n", "t.toml", o);
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(r.config.server.socket, "/tmp/flag.sock");
  EXPECT_EQ(r.config.server.acm_socket, "/tmp/flag-acm.sock");
  EXPECT_EQ(r.config.snapshot.cache_file, "/tmp/cache");
  EXPECT_EQ(r.config.fabric.ca, "mlx4_1");
  EXPECT_EQ(r.config.fabric.port, 2);
  EXPECT_EQ(r.config.log_level, "warn");
}

TEST(Config, BadFlagValueNamesTheFlag) {
  ConfigOverrides o;
  o.port = 999;
  EXPECT_THAT(only_error(parse_config("", "t.toml", o)),
              HasSubstr("--port: fabric.port = 999: expected an integer in [0, 254]"));
  o = {};
  o.log_level = "chatty";
  EXPECT_THAT(only_error(parse_config("", "t.toml", o)), HasSubstr("--log-level: log_level = \"chatty\""));
}

class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ibat-config-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ConfigFile, ReadsAFile) {
  std::string path = write("a.toml", "[policy]\ncapacity = 10\n");
  ConfigResult r = load_config(path, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.policy.capacity, 10u);
}

TEST_F(ConfigFile, ExplicitMissingFileIsAnError) {
  std::string path = (dir_ / "missing.toml").string();
  EXPECT_THAT(only_error(load_config(path, true)), HasSubstr(path + ": cannot read"));
}

TEST_F(ConfigFile, MissingDefaultFileMeansDefaultsWithANote) {
  std::string path = (dir_ / "missing.toml").string();
  ConfigOverrides o;
  o.socket = "/tmp/s";
  ConfigResult r = load_config(path, false, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_THAT(r.notes.front(), HasSubstr("using built-in defaults"));
  EXPECT_EQ(r.config.server.socket, "/tmp/s");
}

TEST_F(ConfigFile, OversizedFileIsRefused) {
  std::string path = write("big.toml", "# " + std::string(1u << 20, 'x') + "\n");
  EXPECT_THAT(only_error(load_config(path, true)), HasSubstr("at most 1048576 bytes"));
}

TEST_F(ConfigFile, ErrorsCarryTheFileName) {
  std::string path = write("bad.toml", "[snapshot]\ninterval_s = -1\n");
  EXPECT_THAT(only_error(load_config(path, true)),
              HasSubstr(path + ":2:14: snapshot.interval_s = -1: expected an integer in [0, 86400]"));
}

TEST(ConfigChanges, ReportsChangedKeysAndWhichNeedARestart) {
  DaemonConfig before;
  DaemonConfig after;
  after.policy.path_ttl = 60s;
  after.server.socket = "/tmp/other";
  std::vector<std::string> changes = describe_changes(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], "policy.path_ttl_s: 900 -> 60");
  EXPECT_EQ(changes[1], "server.socket: \"/run/ibat/ibatd.sock\" -> \"/tmp/other\" (restart needed)");
  EXPECT_TRUE(describe_changes(before, before).empty());
}

TEST(ConfigChanges, DescribedConfigParsesBackToItself) {
  DaemonConfig custom;
  custom.policy.sa_rate = 12.5;
  custom.policy.default_pkey = core::Pkey{0x7fff};
  custom.server.socket_mode = 0640;
  custom.fabric.subscribe_traps = false;
  custom.fabric_ports.ports = {"mlx5_0:1", "mlx5_2"};
  custom.snapshot.cache_file = "/tmp/a \"quoted\" \\ name";
  std::string text;
  std::string section;
  for (const ConfigItem& item : describe(custom)) {
    auto dot = item.key.find('.');
    std::string s = dot == std::string::npos ? "" : item.key.substr(0, dot);
    if (s != section) text += "[" + s + "]\n";
    section = s;
    text += item.key.substr(dot == std::string::npos ? 0 : dot + 1) + " = " + item.value + "\n";
  }
  ConfigResult r = parse_config(text, "rendered.toml");
  ASSERT_TRUE(r.ok()) << r.errors.front() << "\n" << text;
  EXPECT_TRUE(describe_changes(custom, r.config).empty());
}

// The packaged config must pass --check-config and document every key with its built-in default.
TEST(PackagedConfig, MatchesTheBuiltInDefaultsAndListsEveryKey) {
  std::string path = std::string(IBAT_SOURCE_DIR) + "/packaging/ibatd.toml";
  ConfigResult r = load_config(path, true);
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_TRUE(describe_changes(DaemonConfig{}, r.config).empty());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const ConfigItem& item : describe(DaemonConfig{})) {
    std::string name = item.key.substr(item.key.find('.') + 1);
    EXPECT_THAT(text, HasSubstr("\n" + name + " = ")) << item.key << " is not in " << path;
  }
}

}  // namespace
}  // namespace ibat::server
