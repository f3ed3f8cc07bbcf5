// The ibat CLI binary: bad arguments exit 2 with a message naming the input, a missing daemon exits
// 3 with advice, and against the in-test fake ibatd the documented output and exit codes appear.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fake_server.h"
#include "protocol/messages.h"

namespace ibat::test {
namespace {

using namespace std::chrono_literals;
namespace protocol = ibat::protocol;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs bin/ibat with `args` (each single-quoted) and an optional environment prefix.
CliRun ibat(const std::vector<std::string>& args, const std::string& env = "IBAT_SOCKET=") {
  std::string cmd = env + " " + IBAT_CLI_PATH;
  for (const auto& a : args) cmd += " '" + a + "'";
  // Per-test file names: ctest may run several of these tests at once.
  std::string base = ::testing::TempDir() + "ibat_cli_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string out = base + ".out", err = base + ".err";
  int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
  return CliRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
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
           {{"resolve", "--dlid", "3", "--timeout", "abc"}, "--timeout"},
           {{"stats", "--json", "--prometheus"}, "excludes"},
           {{"flush", "--pkey", "0xffff"}, "--pkey needs --dgid"},
           {{"neigh", "add", "10.0.0.1"}, "HWADDR is required"},
           {{"neigh", "add", "10.0.0.1", "zz"}, "HWADDR 'zz'"},
           {{"frobnicate"}, ""},
       }) {
    CliRun r = ibat(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.front() << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Cli, HelpListsExitCodes) {
  CliRun r = ibat({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("12  no-record"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3   cannot connect to ibatd"), std::string::npos) << r.out;
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

// Answers RESOLVE with sample_path() for LID 7 and no-record otherwise; STATS with counters;
// FLUSH with denied.
void fake_daemon(FakeServer& s, const ReceivedFrame& f) {
  std::vector<std::uint8_t> out;
  auto op = static_cast<protocol::Op>(f.header.op);
  if (op == protocol::Op::resolve) {
    auto req = protocol::decode_resolve_request(f.payload);
    bool known = req && std::holds_alternative<core::Lid>(req.value().target) &&
                 std::get<core::Lid>(req.value().target).value == 7;
    protocol::append_resolve_reply(out, f.header.id,
                                   known ? core::ResolveResult{core::Error::ok, sample_path(),
                                                               core::EntryState::valid, 42ms}
                                         : core::ResolveResult{core::Error::no_record, {}, {}, {}});
  } else if (op == protocol::Op::stats) {
    protocol::append_chunked_reply(out, op, f.header.id,
                                   R"({"resolves":5,"entries":2,"failures":{"timeout":1,"total":1},)"
                                   R"("fabric":{"mads_sent":9}})");
  } else if (op == protocol::Op::paths) {
    protocol::append_chunked_reply(out, op, f.header.id,
                                   R"([{"dgid":"fe80::2:c903:a:7","pkey":"0xffff","state":"valid","dlid":7,)"
                                   R"("slid":1,"sl":2,"mtu":2048,"rate":40,"age_ms":42,"idle_ms":3}])");
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
      "slid":1,"sl":2,"mtu":2048,"rate":40.0,"pkt_life":18,"pkey":"0xffff","state":"valid","age_ms":42})"));
}

TEST(Cli, ResolveHumanOutputIsAlignedKeyValue) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dlid:     7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rate:     40 Gb/s\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pkt_life: 18\n"), std::string::npos) << r.out;
}

TEST(Cli, DaemonErrorsMapToTheirExitCodes) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "resolve", "--dlid", "8"});
  EXPECT_EQ(r.exit_code, 12);
  EXPECT_NE(r.err.find("cannot resolve LID 8: the subnet administrator has no path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("saquery"), std::string::npos) << r.err;
}

TEST(Cli, DeniedFlushExitsSixteen) {
  FakeServer server(fake_daemon);
  CliRun r = ibat({"--socket", server.path(), "flush"});
  EXPECT_EQ(r.exit_code, 16);
  EXPECT_NE(r.err.find("run as root"), std::string::npos) << r.err;
}

// fake_daemon, with a "server" section in its STATS.
void fake_daemon_with_server_stats(FakeServer& s, const ReceivedFrame& f) {
  if (static_cast<protocol::Op>(f.header.op) != protocol::Op::stats) return fake_daemon(s, f);
  std::vector<std::uint8_t> out;
  protocol::append_chunked_reply(out, protocol::Op::stats, f.header.id,
                                 R"({"resolves":5,"entries":2,"failures":{"timeout":1,"total":1},)"
                                 R"("fabric":{"mads_sent":9},"server":{"acm_connections":1,"acm_errors":2}})");
  s.reply(out);
}

TEST(Cli, StatsPrometheusHasHelpTypeAndIbatNames) {
  FakeServer server(fake_daemon_with_server_stats);
  CliRun r = ibat({"--socket", server.path(), "stats", "--prometheus"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# HELP ibat_resolves_total Resolve requests accepted.\n# TYPE ibat_resolves_total counter\n"
                       "ibat_resolves_total 5\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_entries gauge\nibat_entries 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_failures_total{reason=\"timeout\"} 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ibat_fabric_mads_sent_total 9\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_server_acm_connections gauge\nibat_server_acm_connections 1\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# TYPE ibat_server_acm_errors_total counter\nibat_server_acm_errors_total 2\n"),
            std::string::npos)
      << r.out;
}

TEST(Cli, StatsTextAndPathsTable) {
  FakeServer server(fake_daemon);
  CliRun stats = ibat({"--socket", server.path(), "stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("failures.timeout: 1\n"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("resolves:         5\n"), std::string::npos) << stats.out;
  FakeServer server2(fake_daemon);
  CliRun paths = ibat({"--socket", server2.path(), "paths"});
  ASSERT_EQ(paths.exit_code, 0) << paths.err;
  EXPECT_EQ(paths.out.substr(0, paths.out.find('\n')),
            "DGID              PKEY    STATE  DLID  SLID  SL  MTU   RATE  AGE_MS  IDLE_MS  LAST_ERROR");
  EXPECT_NE(paths.out.find("fe80::2:c903:a:7  0xffff  valid  7     1     2   2048  40    42      3        -"),
            std::string::npos)
      << paths.out;
}

}  // namespace
}  // namespace ibat::test
