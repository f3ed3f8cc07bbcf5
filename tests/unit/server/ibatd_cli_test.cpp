// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ibatd binary's command line, without a fabric: bad options exit 2 with an "ibatd:" message,
// --check-config exits 0 or 1 and says which configuration it checked, --help and --version exit 0.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../run_program.h"

namespace ibat::test {
namespace {

ProgramRun ibatd(const std::vector<std::string>& args) { return run_program(IBATD_PATH, args); }

class IbatdCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ibatd-cli-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    std::string path = (dir_ / "ibatd.toml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(IbatdCli, BadOptionsAreUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  std::string valid = write("[snapshot]\ncache_file = \"\"\n");
  for (const auto& c : std::vector<Case>{
           {{"--bogus"}, "ibatd: The following argument was not expected: --bogus"},
           {{"--check-config", "--port", "abc"}, "ibatd: Could not convert: --port = abc"},
           {{"--check-config", "--port", "999", "--config", valid}, "ibatd: --port: fabric.port = 999: expected an integer in [0, 254]"},
           {{"--check-config", "--log-level", "chatty", "--config", valid}, "ibatd: --log-level: log_level = \"chatty\""},
       }) {
    ProgramRun r = ibatd(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Run 'ibatd --help' for usage."), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("configuration is not valid"), std::string::npos) << "an option is not the file's fault: " << r.err;
  }
}

TEST_F(IbatdCli, HelpAndVersionExitZero) {
  ProgramRun help = ibatd({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Usage: ibatd"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("2 bad options"), std::string::npos) << help.out;
  ProgramRun version = ibatd({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find('.'), std::string::npos) << version.out;
}

// Everything that would make the daemon fail or misbehave, with file:line:col, in file order.
TEST_F(IbatdCli, CheckConfigCatchesWhatWouldFail) {
  std::string path = write(R"([policy]
retry_max_ms = 50
capacity = 0
retry_base_ms = 100
[server]
socket = "/tmp/ibatd-cli-test.sock"
acm_socket = "/tmp/ibatd-cli-test.sock"
admin_group = "no-such-group-ibat"
[snapshot]
cache_file = "/nonexistent/ibat/ibatd.cache"
)");
  ProgramRun r = ibatd({"--check-config", "--config", path});
  EXPECT_EQ(r.exit_code, 1);
  std::vector<std::string> expected = {
      path + ":2:16: policy.retry_max_ms = 50: must be >= policy.retry_base_ms (100)",
      path + ":3:12: policy.capacity = 0: expected an integer",
      path + ":7:14: server.acm_socket = \"/tmp/ibatd-cli-test.sock\": must differ from server.socket",
      path + ":8:15: server.admin_group = \"no-such-group-ibat\": no such group",
      path + ":10:14: snapshot.cache_file = \"/nonexistent/ibat/ibatd.cache\": directory /nonexistent/ibat does not exist",
      path + ": configuration is not valid (5 errors)",
  };
  std::size_t at = 0;
  for (const auto& line : expected) {
    std::size_t found = r.err.find(line, at);
    EXPECT_NE(found, std::string::npos) << "missing or out of order: " << line << "\nin:\n" << r.err;
    if (found != std::string::npos) at = found + line.size();
  }
}

TEST_F(IbatdCli, CheckConfigOfAValidFileSaysOk) {
  std::string path = write("[snapshot]\ncache_file = \"" + (dir_ / "cache").string() + "\"\n");
  ProgramRun r = ibatd({"--check-config", "--config", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, path + ": configuration OK\n");
}

TEST_F(IbatdCli, MissingDefaultFileIsNotReportedAsAnOkFile) {
  if (std::filesystem::exists("/etc/ibat/ibatd.toml")) GTEST_SKIP() << "/etc/ibat/ibatd.toml exists here";
  ProgramRun r = ibatd({"--check-config", "--cache-file", ""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("built-in defaults (/etc/ibat/ibatd.toml does not exist): configuration OK"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("/etc/ibat/ibatd.toml: configuration OK"), std::string::npos) << r.out;
}

// Started on a file it cannot run with, ibatd logs the errors at "critical". With stderr the
// journal's stream ($JOURNAL_STREAM naming stderr's device:inode) each line carries the priority
// journald files it under; with $JOURNAL_STREAM naming another stream the lines are as on a terminal.
TEST_F(IbatdCli, LogLinesCarryTheirPriorityOnlyWhenStderrIsTheJournalStream) {
  std::string config = write("[policy]\ncapacity = 0\n");
  std::string err = (dir_ / "stderr").string();
  std::ofstream(err).close();  // the shell's 2> truncates this file, keeping its inode
  struct stat st {};
  ASSERT_EQ(::stat(err.c_str(), &st), 0);
  const std::string matching = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const std::string other = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1);
  auto run_with = [&](const std::string& journal_stream) {
    std::string cmd = "JOURNAL_STREAM=" + journal_stream + " " IBATD_PATH " --config '" + config + "' 2>'" + err + "'";
    int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << cmd;
    return slurp(err);
  };
  std::string journal = run_with(matching);
  std::istringstream lines(journal);
  bool capacity_critical = false;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.size() > 3 && line[0] == '<' && line[1] >= '0' && line[1] <= '7' && line[2] == '>') << line;
    capacity_critical |= line.rfind("<2>[critical] ", 0) == 0 && line.find("policy.capacity = 0") != std::string::npos;
  }
  EXPECT_TRUE(capacity_critical) << journal;
  std::string terminal = run_with(other);
  EXPECT_EQ(terminal.find("<2>"), std::string::npos) << terminal;
  EXPECT_NE(terminal.find(" ibatd["), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("] critical: "), std::string::npos) << terminal;
}

}  // namespace
}  // namespace ibat::test
