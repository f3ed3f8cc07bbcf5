// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ibat CLI binary: bad arguments exit 2 with a message naming the input, a missing daemon exits
// 3 with advice (19 for `ibat health`, also when ibatd does not answer in time), and against the
// in-test fake ibatd the documented output and exit codes appear.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../run_program.h"
#include "fake_server.h"
#include "protocol/messages.h"

namespace ibat::test {
namespace {

using namespace std::chrono_literals;
namespace protocol = ibat::protocol;

using CliRun = ProgramRun;

// Runs bin/ibat with `args` and an optional environment prefix.
CliRun ibat(const std::vector<std::string>& args, const std::string& env = "IBAT_SOCKET=") {
  return run_program(IBAT_CLI_PATH, args, env);
}

TEST(Cli, BadArgumentsExitTwoAndNameTheInput) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  for (const auto& c : std::vector<Case>{
           {{"resolve"}, "Exactly 1 option from [--dgid,--dlid,--ip,--hw]"},
           {{"resolve", "--dgid", "fe80::1", "--dlid", "3"}, "2 were given"},
           {{"resolve", "--dgid", "nonsense"}, "--dgid 'nonsense' is not a GID"},
           {{"resolve", "--dlid", "0"}, "--dlid '0' is not a unicast LID"},
           {{"resolve", "--ip", "10.0.0.256"}, "--ip '10.0.0.256' is not an IPv4 or IPv6 address"},
           {{"resolve", "--hw", "80:00"}, "--hw '80:00' is not an IPoIB hardware address"},
           {{"resolve", "--dlid", "3", "--pkey", "0x8000"}, "--pkey '0x8000' is not a P_Key"},
           {{"resolve", "--dlid", "3", "--timeout", "abc"}, "--timeout 'abc' is not a number of milliseconds"},
           {{"resolve", "--dlid", "3", "--timeout", "0"}, "from 1 to 3600000"},
           {{"resolve", "--dlid", "3", "--cache-only", "--force-sa"}, "--cache-only and --force-sa contradict"},
           {{"resolve", "--dlid", "3", "--verify", "--cache-only"}, "--verify asks the cache and then the SA"},
           {{"resolve", "--dlid", "3", "--verify", "--force-sa"}, "it does not take --force-sa"},
           {{"paths", "--dgid", "nonsense"}, "--dgid 'nonsense' is not a GID"},
           {{"stats", "--json", "--prometheus"}, "--json and --prometheus exclude each other"},
           {{"health", "--timeout", "0"}, "--timeout '0' is not a number of seconds from 0.001 to 3600"},
           {{"health", "--timeout", "5s"}, "--timeout '5s' is not a number of seconds"},
           {{"--socket", "", "stats"}, "--socket is empty"},
           {{"stats", "--socket", ""}, "--socket is empty"},
           {{"flush", "--pkey", "0xffff"}, "--pkey needs --dgid"},
           {{"neigh", "add", "10.0.0.1"}, "HWADDR is required"},
           {{"neigh", "add", "10.0.0.1", "zz"}, "HWADDR 'zz'"},
           {{"neigh", "add", "10.0.0.1", "80:00:00:48:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00"},
            "has a zero GID"},
           {{"frobnicate"}, "ibat: unknown command 'frobnicate' (commands: resolve, paths, ports, health, stats, config, flush, neigh, watch)"},
           {{}, "ibat: a command is required (commands: resolve, paths"},
           {{"--bogus"}, "unknown option '--bogus'"},
           {{"neigh", "foo"}, "ibat neigh: unknown command 'foo' (commands: add, del, list, replay)"},
           {{"neigh"}, "ibat neigh: a command is required (commands: add, del, list, replay)"},
       }) {
    CliRun r = ibat(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
    if (std::find(c.args.begin(), c.args.end(), "--json") == c.args.end()) {
      EXPECT_TRUE(r.out.empty()) << r.out;
    } else {  // the same failure as a JSON object
      EXPECT_EQ(nlohmann::json::parse(r.out)["error"]["code"], 2) << r.out;
    }
  }
}

TEST(Cli, HelpListsExitCodes) {
  CliRun r = ibat({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: ibat [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12  no-record"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3   cannot connect to ibatd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("19  health: ibatd did not answer within --timeout"), std::string::npos) << r.out;
}

// A command's help is about that command: no exit-code table, no CLI11 type or validator notes.
TEST(Cli, CommandHelpIsShortAndNamesTheProgram) {
  for (const auto& command : std::vector<std::vector<std::string>>{
           {"resolve", "--help"}, {"stats", "--help"}, {"neigh", "add", "--help"}, {"flush", "--help"}}) {
    CliRun r = ibat(command);
    EXPECT_EQ(r.exit_code, 0) << command.front();
    EXPECT_NE(r.out.find("Usage: ibat " + command.front()), std::string::npos) << r.out;
    for (const char* leftover : {"Exit codes", "UINT", "TEXT", "Excludes", " in ["})
      EXPECT_EQ(r.out.find(leftover), std::string::npos) << leftover << " in:\n" << r.out;
  }
}

TEST(Cli, VersionPrintsTheVersion) {
  CliRun r = ibat({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find('.'), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(Cli, GlobalOptionsMayFollowTheCommand) {
  CliRun r = ibat({"stats", "--socket", "/nonexistent/after.sock"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot connect to /nonexistent/after.sock"), std::string::npos) << r.err;
  CliRun nested = ibat({"neigh", "list", "--socket", "/nonexistent/nested.sock"});
  EXPECT_EQ(nested.exit_code, 3) << nested.err;
  EXPECT_NE(nested.err.find("/nonexistent/nested.sock"), std::string::npos) << nested.err;
}

TEST(Cli, ReplayOfAnUnreadableFileNamesItOnce) {
  CliRun missing = ibat({"neigh", "replay", "/nonexistent/x.pcap"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "ibat neigh replay: /nonexistent/x.pcap: cannot open: No such file or directory\n");
  CliRun dir = ibat({"neigh", "replay", "/"});
  EXPECT_EQ(dir.exit_code, 1);
  EXPECT_EQ(dir.err, "ibat neigh replay: /: is a directory, not a capture file\n");
}

TEST(Cli, ConnectFailureExitsThreeWithAdvice) {
  CliRun r = ibat({"--socket", "/nonexistent/ibatd.sock", "resolve", "--dgid", "fe80::1"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot connect to /nonexistent/ibatd.sock: No such file or directory"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("systemctl start ibatd"), std::string::npos) << r.err;
  CliRun env = ibat({"stats"}, "IBAT_SOCKET=/nonexistent/from-env.sock");
  EXPECT_EQ(env.exit_code, 3);
  EXPECT_NE(env.err.find("/nonexistent/from-env.sock"), std::string::npos) << env.err;
}

core::PathRecord sample_path() {
  core::PathRecord p;
  p.dgid = *core::Gid::parse("fe80::2:c903:a:7");
  p.sgid = *core::Gid::parse("fe80::2:c903:a:1");
  p.dlid = core::Lid{7};
  p.slid = core::Lid{1};
  p.pkey = core::Pkey{0xFFFF};
  p.sl = 2;
  p.mtu = 4;
  p.rate = 7;
  p.pkt_life = 18;
  return p;
}

// Answers RESOLVE with sample_path() for LID 7 (from the subnet's table; a force-SA resolve: from a
// GET) and LID 9 (whose force-SA answer has SL 3 instead of 2), no-record otherwise; STATS with counters;
// FLUSH of everything with denied, of one destination with "3 dropped"; NEIGH_DEL with
// unreachable (no such entry).
void fake_daemon(FakeServer& s, const ReceivedFrame& f) {
  std::vector<std::uint8_t> out;
  auto op = static_cast<protocol::Op>(f.header.op);
  if (op == protocol::Op::resolve) {
    auto req = protocol::decode_resolve_request(f.payload);
    const std::uint16_t lid = req && std::holds_alternative<core::Lid>(req.value().target)
                                  ? std::get<core::Lid>(req.value().target).value
                                  : 0;
    const bool force = req && req.value().force_sa;
    core::ResolveResult result{core::Error::ok, sample_path(), core::EntryState::valid, force ? 0ms : 42ms};
    result.origin = force ? core::PathOrigin::sa_get : core::PathOrigin::sa_table;
    if (req && req.value().service_id) {  // cached apart for it, as ibatd's qos_service_ids may say
      result.path.service_id = *req.value().service_id;
      result.key_qos_fields = core::QosKey::kServiceId;
    }
    if (lid == 9 && force) result.path.sl = 3;
    protocol::append_resolve_reply(out, f.header.id,
                                   lid == 7 || lid == 9 ? result : core::ResolveResult{core::Error::no_record, {}, {}, {}});
  } else if (op == protocol::Op::stats) {
    protocol::append_chunked_reply(out, op, f.header.id,
                                   R"({"resolves":5,"entries":2,"failures":{"timeout":1,"total":1},)"
                                   R"("uptime_s":7,"sm_changes":1,"version":"9.8.7",)"
                                   R"("fabric":{"mads_sent":9,"sm_changes":1,"sa_gettables_sent":2,"sa_gettables_answered":2,)"
                                   R"("sa_table_records":44,"sa_table_bytes":3216,"oversized_mads":0,"sa_srtt_us":2011,)"
                                   R"("sa_table_ns_per_record":13710,"sa_mad_timer_floor_us":4022,"sa_table_timer_floor_us":8000000},)"
                                   R"("server":{"connections":1,)"
                                   R"("connections_total":4,"acm_connections":2,"acm_errors":3,)"
                                   R"("clients_pending":6,"pending_refused_per_uid":8,)"
                                   R"("users":{"top":[{"uid":1000,"resolves":40,"resolves_refused":8,"pending":5,)"
                                   R"("connections":3,"connections_refused":0},{"uid":0,"resolves":2,"resolves_refused":0,)"
                                   R"("pending":1,"connections":1,"connections_refused":0}],"others":{"uids":0,"resolves":0,)"
                                   R"("resolves_refused":0,"pending":0,"connections":0,"connections_refused":0}}},)"
                                   R"("busy_poll":{"window_us":50,"spells":11,"caught":10,"polled_s":0.25,"crowded_stops":3}})");
  } else if (op == protocol::Op::paths) {
    protocol::append_paths_reply(out, f.header.id, protocol::PathsPage{0,
                                   R"([{"dgid":"fe80::2:c903:a:7","sgid":"fe80::2:c903:a:1","pkey":"0xffff",)"
                                   R"("state":"valid","dlid":7,"slid":1,"sl":2,"mtu":2048,"rate":40.0,"age_ms":42,)"
                                   R"("origin":"sa-table","idle_ms":3},)"
                                   R"({"dgid":"fe80::2:c903:a:8","sgid":"fe80::2:c903:a:1","pkey":"0xffff",)"
                                   R"("state":"failed","idle_ms":5,"last_error":"no_record"}])"});
  } else if (op == protocol::Op::neigh_list) {
    protocol::append_chunked_reply(out, op, f.header.id,
                                   R"([{"ip":"10.0.0.7","gid":"fe80::2:c903:a:7","qpn":72,"slid":null,)"
                                   R"("hw":"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:00:07"}])");
  } else if (op == protocol::Op::flush && !f.payload.empty()) {
    protocol::append_flush_reply(out, f.header.id, 3);
  } else if (op == protocol::Op::neigh_del) {
    protocol::append_empty_reply(out, f.header.id, op, protocol::Status::unreachable);
  } else {
    protocol::append_empty_reply(out, f.header.id, op, protocol::Status::denied);
  }
  s.reply(out);
}

TEST(Cli, ResolveJsonPrintsTheDocumentedFields) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc, nlohmann::json::parse(R"({"dgid":"fe80::2:c903:a:7","sgid":"fe80::2:c903:a:1","dlid":7,
      "slid":1,"sl":2,"mtu":2048,"rate":40.0,"pkt_life":18,"pkey":"0xffff","hop_limit":0,"flow_label":0,
      "tclass":0,"reversible":false,"state":"valid","age_ms":42,
      "origin":{"source":"sa-table","age_ms":42,"key":{"sgid":"fe80::2:c903:a:1","dgid":"fe80::2:c903:a:7",
      "pkey":"0xffff"}}})"));
}

TEST(Cli, ResolvePrintsEveryPathRecordFieldWhereItCameFromAndWhatItWasAskedWith) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "7", "--service-id", "0x1060cbc", "--qos-class",
                   "4", "--tclass", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"hop_limit:  0\n", "flow_label: 0x00000\n", "tclass:     0\n", "reversible: no\n",
                           "asked:      ServiceID 0x1060cbc, QoS class 4, TClass 3\n",
                           "origin:     sa-table: the subnet's PathRecord GetTable, 42 ms ago\n",
                           "cache key:  P_Key 0xffff, ServiceID 0x1060cbc\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in:\n" << r.out;
  FakeServer again(fake_daemon);
  CliRun j = ibat({"--socket", again.path(), "resolve", "--dlid", "7", "--service-id", "0x1060cbc", "--qos-class", "4",
                   "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["asked"], nlohmann::json::parse(R"({"service_id":"0x1060cbc","qos_class":4})"));
  EXPECT_EQ(doc["origin"]["key"]["service_id"], "0x1060cbc");
  EXPECT_FALSE(doc["origin"]["key"].contains("qos_class")) << "the fake daemon's key names no class";
}

// The words of the line of `out` whose first word is `first` (empty: no such line).
std::vector<std::string> row(const std::string& out, const std::string& first) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> found;
    for (std::string w; words >> w;) found.push_back(w);
    if (!found.empty() && found.front() == first) return found;
  }
  return {};
}

TEST(Cli, VerifyThatAgreesPrintsBothAnswersFieldByFieldAndExitsZero) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "7", "--verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("FIELD"), std::string::npos) << r.out;
  EXPECT_EQ(row(r.out, "dlid"), (std::vector<std::string>{"dlid", "7", "7"})) << r.out;
  EXPECT_EQ(row(r.out, "reversible"), (std::vector<std::string>{"reversible", "no", "no"})) << r.out;
  EXPECT_NE(r.out.find("agree:  yes"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
  const auto requests = server.wait_for_requests(2);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_FALSE(protocol::decode_resolve_request(requests[0].payload).value().force_sa) << "the cached answer first";
  EXPECT_TRUE(protocol::decode_resolve_request(requests[1].payload).value().force_sa) << "then the SA's";
}

TEST(Cli, VerifyThatDisagreesNamesTheFieldsAndExitsTwenty) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "9", "--verify"});
  EXPECT_EQ(r.exit_code, 20) << r.err;
  EXPECT_EQ(row(r.out, "sl"), (std::vector<std::string>{"sl", "2", "3", "DIFFERS"})) << r.out;
  EXPECT_NE(r.out.find("agree:  no: sl differ"), std::string::npos) << r.out;
  FakeServer again(fake_daemon);
  CliRun j = ibat({"--socket", again.path(), "resolve", "--dlid", "9", "--verify", "--json"});
  EXPECT_EQ(j.exit_code, 20) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_FALSE(doc["agree"]);
  EXPECT_EQ(doc["differ"], nlohmann::json::parse(R"(["sl"])"));
  EXPECT_EQ(doc["cached"]["sl"], 2);
  EXPECT_EQ(doc["sa"]["sl"], 3);
  EXPECT_EQ(doc["cached"]["origin"]["source"], "sa-table");
  EXPECT_EQ(doc["sa"]["origin"]["source"], "sa-get");
  EXPECT_EQ(doc["fields"]["sl"], nlohmann::json::parse(R"({"cached":"2","sa":"3"})"));
  CliRun help = ibat({"--help"});
  EXPECT_NE(help.out.find("20  resolve --verify"), std::string::npos) << help.out;
}

TEST(Cli, PathsDgidListsOnlyThePathsToThatGidHoweverItIsSpelt) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "paths", "--dgid", "fe80:0:0:0:2:c903:a:7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.size(), 1u) << r.out;
  EXPECT_EQ(doc[0]["dlid"], 7);
  FakeServer again(fake_daemon);
  CliRun none = ibat({"--socket", again.path(), "paths", "--dgid", "fe80::9", "--json"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out), nlohmann::json::array());
}

TEST(Cli, ConfigPrintsTheRunningConfigurationAsToml) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    protocol::append_chunked_reply(out, protocol::Op::stats, f.header.id,
                                   R"({"resolves":0,"config":[{"key":"log_level","value":"\"info\"","reloadable":true},)"
                                   R"({"key":"policy.path_ttl_s","value":"600","reloadable":true},)"
                                   R"({"key":"policy.capacity","value":"100000","reloadable":true},)"
                                   R"({"key":"fabric.ports","value":"[]","reloadable":false}]})");
    s.reply(out);
  });
  CliRun r = ibat({"--socket", server.path(), "config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("log_level = \"info\"\n\n[policy]\npath_ttl_s = 600\ncapacity = 100000\n\n[fabric]\n"
                       "ports = []  # restart\n"),
            std::string::npos)
      << r.out;
  FakeServer old(fake_daemon);  // an ibatd without "config" in its stats
  CliRun older = ibat({"--socket", old.path(), "config", "--json"});
  EXPECT_EQ(older.exit_code, 17) << older.err;
  EXPECT_EQ(nlohmann::json::parse(older.out)["error"]["code"], 17);
}

TEST(Cli, UnderJsonEveryFailureIsAJsonObjectOnStdout) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  FakeServer server(fake_daemon);
  for (const auto& c : std::vector<Case>{
           {{"resolve", "--dgid", "nonsense", "--json"}, 2, "--dgid 'nonsense' is not a GID"},
           {{"paths", "--bogus", "--json"}, 2, "--bogus"},
           {{"--socket", "/nonexistent/ibatd.sock", "stats", "--json"}, 3, "cannot connect to /nonexistent/ibatd.sock"},
           {{"--socket", server.path(), "resolve", "--dlid", "8", "--json"}, 12, "cannot resolve LID 8"},
       }) {
    CliRun r = ibat(c.args);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    auto doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc["error"]["code"], c.code) << r.out;
    EXPECT_NE(doc["error"]["message"].get<std::string>().find(c.message), std::string::npos) << r.out;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "stderr keeps its line: " << r.err;
  }
  CliRun text = ibat({"--socket", "/nonexistent/ibatd.sock", "stats"});
  EXPECT_TRUE(text.out.empty()) << "without --json, stdout stays empty: " << text.out;
}

TEST(Cli, ResolveHumanOutputIsAlignedKeyValue) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dlid:       7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rate:       40 Gb/s\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pkt_life:   18\n"), std::string::npos) << r.out;
}

TEST(Cli, DaemonErrorsMapToTheirExitCodes) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "8"});
  EXPECT_EQ(r.exit_code, 12);
  EXPECT_NE(r.err.find("cannot resolve LID 8: the subnet administrator has no path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("saquery"), std::string::npos) << r.err;
}

TEST(Cli, DeniedFlushExitsSixteenWithOneHint) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "flush"});
  EXPECT_EQ(r.exit_code, 16);
  EXPECT_EQ(r.err, "ibat flush: cannot flush: permission denied (needs root or the ibatd admin group)\n");
}

TEST(Cli, FlushPrintsHowManyPathsItDropped) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "flush", "--dgid", "fe80::2:c903:a:7"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "flushed 3 cached paths to fe80::2:c903:a:7\n");
}

TEST(Cli, DeletingAnAbsentNeighbourFails) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "neigh", "del", "10.0.0.9"});
  EXPECT_EQ(r.exit_code, 11);
  EXPECT_EQ(r.err, "ibat neigh del: cannot delete neighbour 10.0.0.9: ibatd has no neighbour entry for it "
                   "(see 'ibat neigh list')\n");
}

TEST(Cli, CacheOnlyMissSaysNotCachedAndNotSaquery) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "8", "--cache-only"});
  EXPECT_EQ(r.exit_code, 12);
  EXPECT_NE(r.err.find("no usable path in ibatd's cache (--cache-only never asks the subnet administrator)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("saquery"), std::string::npos) << r.err;
}

// STATS of a two-port host: mlx5_0:1 active, mlx5_1:1 with its cable out and its SA silent.
// RESOLVE: sample_path() from the request's source GID.
void two_port_daemon(FakeServer& s, const ReceivedFrame& f) {
  std::vector<std::uint8_t> out;
  auto op = static_cast<protocol::Op>(f.header.op);
  if (op == protocol::Op::resolve) {
    auto req = protocol::decode_resolve_request(f.payload);
    core::PathRecord path = sample_path();
    if (req && req.value().sgid) path.sgid = *req.value().sgid;
    protocol::append_resolve_reply(out, f.header.id, core::ResolveResult{core::Error::ok, path, core::EntryState::valid, 1ms});
    return s.reply(out);
  }
  if (op != protocol::Op::stats) {
    protocol::append_empty_reply(out, f.header.id, op, protocol::Status::denied);
    return s.reply(out);
  }
  protocol::append_chunked_reply(
      out, op, f.header.id,
      R"({"resolves":7,"entries":5,"uptime_s":3,"version":"9.8.7","server":{"connections":1},"fabric":{"mads_sent":12},)"
      R"("ports":[{"name":"mlx5_0:1","device":"mlx5_0","port":1,"state":"active","gid":"fe80::1","lid":3,"sm_lid":1,)"
      R"("subnet_prefix":"0xfe80000000000000","entries":3,"resolves":4,"sa_queries":2,"sa_window":4,"default":true,)"
      R"("failures":{"timeout":0,"total":0},"fabric":{"mads_sent":5}},)"
      R"({"name":"mlx5_1:1","device":"mlx5_1","port":1,"state":"link_down","gid":"fe80::2","lid":4,"sm_lid":0,)"
      R"("subnet_prefix":"0xfe80000000000000","entries":2,"resolves":3,"sa_queries":9,"sa_window":1,"default":false,)"
      R"("sa_silent_s":12.5,"failures":{"timeout":2,"total":2},"fabric":{"mads_sent":7}}]})");
  s.reply(out);
}

TEST(Cli, PortsListsEveryPortOnALine) {
  FakeServer server(two_port_daemon);
  CliRun r = ibat({"--socket", server.path(), "ports"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PORT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mlx5_1:1  link_down"), std::string::npos) << r.out;
  FakeServer again(two_port_daemon);  // one connection each
  CliRun j = ibat({"--socket", again.path(), "ports", "--json"});
  EXPECT_EQ(nlohmann::json::parse(j.out).size(), 2u);
}

TEST(Cli, HealthFailsWithALinePerProblemOfEachPort) {
  FakeServer server(two_port_daemon);
  CliRun r = ibat({"--socket", server.path(), "health"});
  EXPECT_EQ(r.exit_code, 18);
  EXPECT_EQ(r.out,
            "mlx5_1:1: link down (check the cable and `ibstat`)\n"
            "mlx5_1:1: no SM (SM LID 0): is OpenSM running on this subnet?\n"
            "mlx5_1:1: SA not answering for 12.5 s\n");
  FakeServer again(two_port_daemon);  // one connection each
  CliRun j = ibat({"--socket", again.path(), "health", "--json"});
  EXPECT_EQ(j.exit_code, 18);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_FALSE(doc["healthy"]);
  EXPECT_TRUE(doc["ports"][0]["healthy"]);
  EXPECT_EQ(doc["ports"][1]["problems"].size(), 3u);
}

TEST(Cli, ResolvePortNamesTheSourceByItsPortsGid) {
  FakeServer server(two_port_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--port", "mlx5_1:1", "--dlid", "7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["sgid"], "fe80::2") << "mlx5_1:1's GID, from ibatd's port list";
  FakeServer again(two_port_daemon);
  CliRun unknown = ibat({"--socket", again.path(), "resolve", "--port", "mlx5_7:1", "--dlid", "7"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--port mlx5_7:1: ibatd serves no such port (it serves mlx5_0:1, mlx5_1:1)"),
            std::string::npos)
      << unknown.err;
  CliRun both = ibat({"--socket", again.path(), "resolve", "--port", "mlx5_1:1", "--sgid", "fe80::2", "--dlid", "7"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--sgid and --port both name the source"), std::string::npos) << both.err;
}

TEST(Cli, HealthOfADaemonWithNoPortLeftIsNotHealthy) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    protocol::append_chunked_reply(out, protocol::Op::stats, f.header.id, R"({"resolves":0,"ports":[]})");
    s.reply(out);
  });
  CliRun r = ibat({"--socket", server.path(), "health"});
  EXPECT_EQ(r.exit_code, 18);
  EXPECT_EQ(r.out, "ibatd serves no port: no InfiniBand HCA is present (removed, or its driver not loaded)\n");
}

// A wedged ibatd takes the request and never answers: at --timeout, exit 19 and one line.
TEST(Cli, HealthOfADaemonThatDoesNotAnswerEndsAtTheDeadlineWithOneLine) {
  FakeServer server([](FakeServer&, const ReceivedFrame&) {});
  CliRun r = ibat({"--socket", server.path(), "health", "--timeout", "0.3"});
  EXPECT_EQ(r.exit_code, 19);
  EXPECT_EQ(r.err, "ibat health: ibatd did not answer within 0.3 s (socket " + server.path() + ")\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(server.wait_for_requests(1).size(), 1u) << "the request was sent before the deadline";
}

TEST(Cli, HealthWithoutADaemonExitsNineteenWithOneLine) {
  CliRun missing = ibat({"--socket", "/nonexistent/ibatd.sock", "health"});
  EXPECT_EQ(missing.exit_code, 19);
  EXPECT_EQ(missing.err,
            "ibat health: ibatd is not running (socket /nonexistent/ibatd.sock: No such file or directory) "
            "(start it with 'systemctl start ibatd', or pass --socket)\n");
  EXPECT_TRUE(missing.out.empty()) << missing.out;

  // A socket file nobody listens on (ibatd killed without cleaning up): ECONNREFUSED.
  char dir[] = "/tmp/ibat-cli-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string stale = std::string(dir) + "/ibatd.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, stale.c_str(), stale.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  CliRun refused = ibat({"--socket", stale, "health"});
  EXPECT_EQ(refused.exit_code, 19);
  EXPECT_EQ(refused.err, "ibat health: ibatd is not running (socket " + stale +
                             ": Connection refused) (start it with 'systemctl start ibatd', or pass --socket)\n");
  ::unlink(stale.c_str());
  ::rmdir(dir);
}

TEST(Cli, HealthOfADaemonThatHangsUpExitsNineteenWithOneLine) {
  FakeServer server([](FakeServer& s, const ReceivedFrame&) { s.close_connection(); });
  CliRun r = ibat({"--socket", server.path(), "health"});
  EXPECT_EQ(r.exit_code, 19);
  EXPECT_EQ(r.err, "ibat health: no answer from ibatd (socket " + server.path() +
                       "): it closed the connection (see 'journalctl -u ibatd')\n");
}

TEST(Cli, HealthOfAnOlderDaemonWithoutPortsIsNotHealthy) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "health"});
  EXPECT_EQ(r.exit_code, 18);
  EXPECT_EQ(r.out, "ibatd reports no ports (an ibatd older than this ibat?)\n");
}

TEST(Cli, PrometheusLabelsAPortsSeriesWithDeviceAndPortAndTheHostsNot) {
  FakeServer server(two_port_daemon);
  CliRun r = ibat({"--socket", server.path(), "stats", "--prometheus"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# TYPE ibat_resolves_total counter\nibat_resolves_total{device=\"mlx5_0\",port=\"1\"} 4\n"
                       "ibat_resolves_total{device=\"mlx5_1\",port=\"1\"} 3\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("ibat_resolves_total 7"), std::string::npos) << "no unlabelled total beside the ports: " << r.out;
  EXPECT_NE(r.out.find("ibat_resolve_failures_total{device=\"mlx5_1\",port=\"1\",reason=\"timeout\"} 2\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_mads_sent_total{device=\"mlx5_1\",port=\"1\"} 7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_connections_open 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_uptime_seconds 3\n"), std::string::npos) << r.out;
  // Each port's state and its SA's silence, for the alert rules (packaging/prometheus).
  EXPECT_NE(r.out.find("# TYPE ibat_port_active gauge\nibat_port_active{device=\"mlx5_0\",port=\"1\"} 1\n"
                       "ibat_port_active{device=\"mlx5_1\",port=\"1\"} 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_sa_silent_seconds gauge\nibat_sa_silent_seconds{device=\"mlx5_0\",port=\"1\"} 0\n"
                       "ibat_sa_silent_seconds{device=\"mlx5_1\",port=\"1\"} 12.5\n"),
            std::string::npos)
      << r.out;
  std::string file = ::testing::TempDir() + "ibat_stats_ports.prom";
  std::ofstream(file) << r.out;
  ProgramRun lint = run_program("promtool", {"check", "metrics"}, "<" + file);
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << r.out;
}

TEST(Cli, StatsPrometheusFollowsTheConventions) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "stats", "--prometheus"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# HELP ibat_resolves_total Resolve requests accepted.\n# TYPE ibat_resolves_total counter\n"
                       "ibat_resolves_total 5\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_cache_entries gauge\nibat_cache_entries 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_resolve_failures_total{reason=\"timeout\"} 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_mads_sent_total 9\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_sa_gettables_sent_total counter\nibat_sa_gettables_sent_total 2\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_sa_gettables_answered_total 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_sa_table_records_total 44\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_sa_table_bytes_total 3216\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_mad_oversized_total 0\n"), std::string::npos) << r.out;
  // What the MAD timers follow, from ibatd's microseconds and nanoseconds to base units.
  EXPECT_NE(r.out.find("# TYPE ibat_sa_srtt_seconds gauge\nibat_sa_srtt_seconds 0.002011\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_sa_table_seconds_per_record 1.371e-05\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_sa_mad_timer_floor_seconds gauge\nibat_sa_mad_timer_floor_seconds 0.004022\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_sa_table_timer_floor_seconds 8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_uptime_seconds 7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_build_info{version=\"9.8.7\"} 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_connections_open gauge\nibat_connections_open 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_connections_accepted_total 4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_acm_connections_open gauge\nibat_acm_connections_open 2\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_acm_errors_total 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_clients_pending_resolves gauge\nibat_clients_pending_resolves 6\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_pending_refused_per_uid_total counter\nibat_pending_refused_per_uid_total 8\n"),
            std::string::npos)
      << r.out;
  // The users who asked the most, labelled uid, the rest as uid="other".
  EXPECT_NE(r.out.find("# TYPE ibat_user_resolves_total counter\nibat_user_resolves_total{uid=\"1000\"} 40\n"
                       "ibat_user_resolves_total{uid=\"0\"} 2\nibat_user_resolves_total{uid=\"other\"} 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_user_resolves_refused_total{uid=\"1000\"} 8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_user_pending_resolves gauge\nibat_user_pending_resolves{uid=\"1000\"} 5\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ibat_user_connections_open{uid=\"1000\"} 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_user_connections_refused_total{uid=\"0\"} 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_busy_poll_seconds_total 0.25\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_busy_poll_crowded_stops_total 3\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ibat_fabric_sm_changes"), std::string::npos) << "a duplicate of ibat_sm_changes_total";
  EXPECT_EQ(r.out.find("ibatd statistic"), std::string::npos) << "every metric has real help";
  // Prometheus' own parser and linter: `promtool check metrics` exits 0 with nothing to say.
  std::string file = ::testing::TempDir() + "ibat_stats.prom";
  std::ofstream(file) << r.out;
  ProgramRun lint = run_program("promtool", {"check", "metrics"}, "<" + file);
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << r.out;
}

TEST(Cli, StatsTextAndPathsTable) {
  FakeServer server(fake_daemon);
  CliRun stats = ibat({"--socket", server.path(), "stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  // One "key: value" line each, the values in one column.
  auto has_line = [&](const std::string& key, const std::string& value) {
    std::istringstream lines(stats.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(key + ":", 0) != 0) continue;
      const std::size_t at = line.find_first_not_of(' ', key.size() + 1);
      return at != std::string::npos && line.substr(at) == value;
    }
    return false;
  };
  EXPECT_TRUE(has_line("failures.timeout", "1")) << stats.out;
  EXPECT_TRUE(has_line("resolves", "5")) << stats.out;
  EXPECT_TRUE(has_line("server.users.top[uid 1000].resolves_refused", "8")) << stats.out;
  FakeServer server2(fake_daemon);
  CliRun paths = ibat({"--socket", server2.path(), "paths"});
  ASSERT_EQ(paths.exit_code, 0) << paths.err;
  // ORIGIN is where a held path came from (the JSON's "origin"); "-" for an entry without a path.
  EXPECT_EQ(paths.out.substr(0, paths.out.find('\n')),
            "DGID              SGID              PKEY    QOS  STATE   DLID  SLID  SL  MTU   RATE     ORIGIN    AGE_MS  "
            "IDLE_MS  LAST_ERROR");
  EXPECT_NE(paths.out.find("fe80::2:c903:a:7  fe80::2:c903:a:1  0xffff  -    valid   7     1     2   2048  40 Gb/s  "
                           "sa-table  42      3        -\n"),
            std::string::npos)
      << paths.out;
  EXPECT_NE(paths.out.find("fe80::2:c903:a:8  fe80::2:c903:a:1  0xffff  -    failed  -     -     -   -     -        "
                           "-         -       5        no_record\n"),
            std::string::npos)
      << paths.out;
  FakeServer server3(fake_daemon);
  CliRun neigh = ibat({"--socket", server3.path(), "neigh", "list"});
  ASSERT_EQ(neigh.exit_code, 0) << neigh.err;
  EXPECT_NE(neigh.out.find("10.0.0.7  fe80::2:c903:a:7  0x000048  -"), std::string::npos) << neigh.out;
}

}  // namespace
}  // namespace ibat::test
