// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Runs a program of this build (the ibat CLI, ibatd) through the shell for tests of its exit code
// and messages: stdout and stderr go to per-test files under the GoogleTest temp dir.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ibat::test {

struct ProgramRun {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `program` with `args` (each single-quoted) after an environment prefix such as "A=b".
inline ProgramRun run_program(const std::string& program, const std::vector<std::string>& args,
                              const std::string& env = "") {
  std::string cmd = env + " " + program;
  for (const auto& a : args) cmd += " '" + a + "'";
  // Per-test file names: ctest may run several of these tests at once.
  std::string base = ::testing::TempDir() + "ibat_run_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string out = base + ".out", err = base + ".err";
  int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
  return ProgramRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

}  // namespace ibat::test
