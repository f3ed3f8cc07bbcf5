// NativeServer batching (docs/protocol.md, "Batching"): the RESOLVE frames a client writes at once
// reach the daemon in one read and are answered together: every frame answered, one read of the
// Resolver's clock for all of them, and one write carrying all their replies.
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include "server/daemon/native_server.h"
#include "server_test_support.h"
#include "test_client.h"

namespace ibat::server {
namespace {

using test_support::Client;
using test_support::FakeSa;
using test_support::gid;
using test_support::path_to;
using test_support::kLocalGid;

class NativeBatchTest : public ::testing::Test {
 protected:
  template <class F>
  auto on_loop(F f) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(loop_, [&task] { task(); });
    return result.get();
  }
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ibat-native-batch-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    server_.listen((dir_ / "ibatd.sock").string(), 0600, NativeLimits{});
    gate_.on_local_port(core::LocalPort{kLocalGid, core::Lid{1}, core::Lid{1}, true});
    thread_ = std::thread([this] { loop_.run(); });
  }
  void TearDown() override {
    on_loop([this] {
      server_.abort_all();
      gate_.stop();
      return 0;
    });
    work_.reset();
    loop_.stop();
    thread_.join();
    std::filesystem::remove_all(dir_);
  }
  std::string socket() const { return (dir_ / "ibatd.sock").string(); }

  std::filesystem::path dir_;
  BatchClock clock_;
  FakeSa sink_;
  core::Policy policy_;
  core::Resolver resolver_{policy_, clock_, sink_};
  asio::io_context loop_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{loop_.get_executor()};
  ResolverGate gate_{loop_, resolver_};
  ServerCounters counters_;
  NativeServer server_{loop_, gate_, NativeHooks{{}, {}, {}, {}, &clock_}, counters_};
  std::thread thread_;
};

TEST_F(NativeBatchTest, FramesOfOneReadAreAnsweredTogetherWithOneClockReadAndOneWrite) {
  constexpr std::uint32_t kCount = 32;
  Client c(socket());
  ASSERT_TRUE(c.connected());
  for (std::uint32_t n = 0; n < kCount; ++n) {  // cache every destination through the fake SA
    c.resolve(n + 1, gid(0x100 + n));
    const core::PathQuery q = sink_.wait_query(n);
    on_loop([&] {
      gate_.on_query_result(q.id, core::QueryResult{core::Error::ok, path_to(*q.dgid, static_cast<std::uint16_t>(10 + n))});
      return 0;
    });
    auto f = c.next();
    ASSERT_TRUE(f);
    ASSERT_EQ(f->header.status, protocol::Status::ok);
  }
  struct Snapshot {
    std::uint64_t reads, writes, clock;
  };
  auto snapshot = [&] {
    return on_loop([&] { return Snapshot{counters_.native.reads, counters_.native.writes, clock_.reads()}; });
  };
  const Snapshot before = snapshot();

  std::vector<std::uint8_t> batch;  // every request in one write
  for (std::uint32_t n = 0; n < kCount; ++n) {
    core::ResolveRequest r;
    r.target = gid(0x100 + n);
    protocol::append_resolve_request(batch, 1000 + n, r);
  }
  ASSERT_TRUE(c.send(batch));
  std::set<std::uint32_t> answered;
  for (std::uint32_t n = 0; n < kCount; ++n) {
    auto f = c.next();
    ASSERT_TRUE(f) << "reply " << n << " of " << kCount << " missing";
    EXPECT_EQ(f->header.status, protocol::Status::ok);
    answered.insert(f->header.id);
  }
  EXPECT_EQ(answered.size(), kCount);
  EXPECT_EQ(*answered.begin(), 1000u);
  EXPECT_EQ(sink_.count(), kCount) << "all answered from the cache";

  const Snapshot after = snapshot();
  EXPECT_EQ(after.reads - before.reads, 1u);
  EXPECT_EQ(after.writes - before.writes, 1u) << "the replies of one read leave in one write";
  EXPECT_EQ(after.clock - before.clock, 1u) << "one clock read for the whole batch";
}

}  // namespace
}  // namespace ibat::server
