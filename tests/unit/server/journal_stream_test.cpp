// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// is_journal_stream(): $JOURNAL_STREAM names a descriptor only with that descriptor's own
// "device:inode"; unset, malformed or another file's numbers mean it is not the journal.
#include "server/daemon/journal_stream.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace ibat::server {
namespace {

std::string dev_ino(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

TEST(JournalStream, MatchesTheDescriptorsOwnDeviceAndInode) {
  std::unique_ptr<std::FILE, FileCloser> file(std::tmpfile());
  ASSERT_TRUE(file);
  const int fd = ::fileno(file.get());
  EXPECT_TRUE(is_journal_stream(fd, dev_ino(fd).c_str()));

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_TRUE(is_journal_stream(pipe_fds[1], dev_ino(pipe_fds[1]).c_str())) << "a pipe, like journald's socket";
  EXPECT_FALSE(is_journal_stream(fd, dev_ino(pipe_fds[1]).c_str())) << "the variable names another stream";
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(JournalStream, UnsetMalformedOrOtherNumbersAreNotTheJournal) {
  std::unique_ptr<std::FILE, FileCloser> file(std::tmpfile());
  ASSERT_TRUE(file);
  const int fd = ::fileno(file.get());
  const std::string real = dev_ino(fd);
  const std::string device = real.substr(0, real.find(':'));
  const std::string inode = real.substr(real.find(':') + 1);
  EXPECT_FALSE(is_journal_stream(fd, nullptr));
  for (const std::string& value : {std::string(), std::string(":"), device, device + ":", ":" + inode,
                                   device + ":" + inode + "x", " " + real, device + ":-" + inode,
                                   device + ":" + std::to_string(std::stoull(inode) + 1)})
    EXPECT_FALSE(is_journal_stream(fd, value.c_str())) << "JOURNAL_STREAM=\"" << value << "\"";
  EXPECT_FALSE(is_journal_stream(-1, real.c_str())) << "a closed descriptor";
}

}  // namespace
}  // namespace ibat::server
