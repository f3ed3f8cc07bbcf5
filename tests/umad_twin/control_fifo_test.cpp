// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's control FIFO (IBAT_TWIN_CONTROL): the two commands and what is wrong with any other
// line, lines read whole however they are written, the <path>.done reply, a FIFO found in place
// used as is and kept, one made removed at the end, and a path that is no FIFO refused.
#include "hotplug.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ibat::umad_twin {
namespace {

namespace fs = std::filesystem;

TEST(ControlCommand, AddAndRemoveTakeOneCa) {
  std::string error;
  auto c = parse_control("remove mlx5_0", error);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verb, ControlCommand::Verb::remove);
  EXPECT_EQ(c->ca, "mlx5_0");
  c = parse_control("  add\tmlx5_1 \r", error);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verb, ControlCommand::Verb::add);
  EXPECT_EQ(c->ca, "mlx5_1");
}

TEST(ControlCommand, AnyOtherLineSaysWhatIsWrong) {
  std::string error;
  EXPECT_FALSE(parse_control("unplug mlx5_0", error));
  EXPECT_EQ(error, "unknown command 'unplug' (use: add <ca>, remove <ca>, lose-rmpp-segment <ca> <n>)");
  EXPECT_FALSE(parse_control("remove", error));
  EXPECT_EQ(error, "'remove' takes one CA name");
  EXPECT_FALSE(parse_control("add mlx5_0 mlx5_1", error));
  EXPECT_EQ(error, "'add' takes one CA name");
}

TEST(ControlCommand, LoseRmppSegmentTakesACaAndASegmentNumber) {
  std::string error;
  auto c = parse_control("lose-rmpp-segment mlx5_0 3", error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->verb, ControlCommand::Verb::lose_segment);
  EXPECT_EQ(c->ca, "mlx5_0");
  EXPECT_EQ(c->segment, 3u);
  for (const char* bad : {"lose-rmpp-segment mlx5_0", "lose-rmpp-segment mlx5_0 0", "lose-rmpp-segment mlx5_0 x",
                          "lose-rmpp-segment mlx5_0 3 4", "lose-rmpp-segment"}) {
    EXPECT_FALSE(parse_control(bad, error)) << bad;
    EXPECT_EQ(error, "'lose-rmpp-segment' takes a CA name and a segment number (1 or more)") << bad;
  }
}

class ControlFifoTest : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("twin-control-" + std::to_string(::getpid()));
  fs::path path = dir / "control";
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  void say(const std::string& text) const {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    ASSERT_GE(fd, 0) << "the twin holds the FIFO open: a writer never waits";
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  std::string replies() const {
    std::ifstream in(path.string() + ".done");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
};

TEST_F(ControlFifoTest, LinesAreReadWholeAndAnsweredInTheDoneFile) {
  {
    ControlFifo fifo(path.string());
    ASSERT_TRUE(fs::is_fifo(path));
    EXPECT_FALSE(readable(fifo.fd()));
    EXPECT_TRUE(fifo.read_lines().empty());
    say("remove mlx5_0\n\n  add ");
    EXPECT_TRUE(readable(fifo.fd()));
    EXPECT_EQ(fifo.read_lines(), std::vector<std::string>{"remove mlx5_0"}) << "a blank line is none, a partial one waits";
    EXPECT_FALSE(readable(fifo.fd())) << "never EOF once the writer has gone";
    say("mlx5_0\nadd mlx5_1\n");
    EXPECT_EQ(fifo.read_lines(), (std::vector<std::string>{"add mlx5_0", "add mlx5_1"}));
    fifo.done("remove mlx5_0");
    fifo.done("add mlx5_0");
    EXPECT_EQ(replies(), "remove mlx5_0\nadd mlx5_0\n");
  }
  EXPECT_FALSE(fs::exists(path)) << "the FIFO it made is removed";
  EXPECT_TRUE(fs::exists(path.string() + ".done")) << "the replies stay for the test";
}

TEST_F(ControlFifoTest, AFifoInPlaceIsUsedAndKept) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const int early = ::open(path.c_str(), O_RDWR);  // a test that wrote before the process started
  ASSERT_GE(early, 0);
  ASSERT_EQ(::write(early, "remove mlx5_1\n", 14), 14);
  {
    ControlFifo fifo(path.string());
    EXPECT_EQ(fifo.read_lines(), std::vector<std::string>{"remove mlx5_1"});
  }
  ::close(early);
  EXPECT_TRUE(fs::is_fifo(path));
}

TEST_F(ControlFifoTest, APathThatIsNoFifoIsRefusedByName) {
  std::ofstream(path) << "not a fifo\n";
  try {
    ControlFifo fifo(path.string());
    FAIL() << "a regular file accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + " exists and is not a FIFO");
  }
  EXPECT_THROW(ControlFifo((dir / "no-such-dir" / "control").string()), std::runtime_error);
}

}  // namespace
}  // namespace ibat::umad_twin
