// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Security of ibatd's socket files (docs/security.md): the configured mode is what the native and
// ACM sockets get, a restrictive mode keeps other users out, what is found at the socket path at
// start is replaced only when it is a dead socket (never a live one, a regular file or a symlink,
// whose target is left alone), and the socket file is removed at shutdown.
#include <fstream>
#include <sys/stat.h>

#include "security_harness.h"

namespace ibat::server::security_test {
namespace {

std::uint32_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  EXPECT_TRUE(S_ISSOCK(st.st_mode)) << path;
  return st.st_mode & 07777;
}

class SocketFiles : public DaemonTest {};

TEST_F(SocketFiles, BothSocketsGetTheConfiguredMode) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  config_.server.socket_mode = 0660;
  ::mode_t old_umask = ::umask(0);  // the daemon sets the mode itself, whatever the umask
  start();
  ::umask(old_umask);
  EXPECT_EQ(mode_of(config_.server.socket), 0660u);
  EXPECT_EQ(mode_of(config_.server.acm_socket), 0660u);
}

TEST_F(SocketFiles, DefaultModeLetsAnyUserConnect) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  ASSERT_EQ(config_.server.socket_mode, 0666u);
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  EXPECT_EQ(mode_of(config_.server.socket), 0666u);
  EXPECT_EQ(mode_of(config_.server.acm_socket), 0666u);
  Client nobody(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(nobody.connected());
  nobody.request(protocol::Op::stats, 1);
  EXPECT_FALSE(nobody.body(1).empty());
  int acm = connect_as(config_.server.acm_socket, Identity{});
  EXPECT_GE(acm, 0) << std::strerror(-acm);
  if (acm >= 0) ::close(acm);
}

TEST_F(SocketFiles, RestrictiveModeKeepsOtherUsersOut) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  config_.server.socket_mode = 0600;
  start();
  EXPECT_EQ(connect_as(config_.server.socket, Identity{}), -EACCES);
  EXPECT_EQ(connect_as(config_.server.acm_socket, Identity{}), -EACCES);
  Client owner(config_.server.socket);  // root, the owner
  EXPECT_TRUE(owner.connected());
}

TEST_F(SocketFiles, StaleSocketFromACrashIsReplaced) {
  {  // bind a socket file and close it without removing it: what a SIGKILLed daemon leaves
    asio::io_context other;
    asio::local::stream_protocol::acceptor dead(other, asio::local::stream_protocol::endpoint(config_.server.socket));
  }
  ASSERT_TRUE(std::filesystem::is_socket(config_.server.socket));
  start();
  Client c(config_.server.socket);
  ASSERT_TRUE(c.connected());
  c.request(protocol::Op::stats, 1);
  EXPECT_FALSE(c.body(1).empty());
}

TEST_F(SocketFiles, RegularFileAtTheSocketPathIsNeitherRemovedNorUsed) {
  std::ofstream(config_.server.socket) << "not a socket";
  EXPECT_THROW(start(), std::runtime_error);
  std::ifstream in(config_.server.socket);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "not a socket");
}

TEST_F(SocketFiles, SymlinkAtTheSocketPathIsRefusedAndItsTargetUntouched) {
  std::filesystem::path target = dir_ / "precious";
  std::ofstream(target) << "keep me";
  std::filesystem::permissions(target, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::create_symlink(target, config_.server.socket);
  EXPECT_THROW(start(), std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_symlink(config_.server.socket));
  EXPECT_EQ(std::filesystem::status(target).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);  // no chmod through it
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
}

TEST_F(SocketFiles, SymlinkToALiveSocketIsRefused) {
  start();
  std::filesystem::path alias = dir_ / "alias.sock";
  std::filesystem::create_symlink(config_.server.socket, alias);
  asio::io_context other_loop;
  FakeSa other_sa;
  DaemonConfig other_config = config_;
  other_config.server.socket = alias.string();
  Service other(other_loop, other_config, other_sa);
  EXPECT_THROW(other.start(), std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_socket(config_.server.socket));  // the live one is still there
  Client c(config_.server.socket);
  EXPECT_TRUE(c.connected());
}

TEST_F(SocketFiles, ShutdownRemovesBothSocketFiles) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  std::promise<void> done;
  asio::post(loop_, [&] { service_->shutdown([&] { done.set_value(); }); });
  ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(config_.server.socket)));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(config_.server.acm_socket)));
}

}  // namespace
}  // namespace ibat::server::security_test
