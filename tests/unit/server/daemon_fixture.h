// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A test fixture for the whole daemon: ibatd's Service in a temp directory with its loop on a
// thread and the SA faked (test_support::FakeSa). Used by the Service, native batching, security
// and local SA responder tests; clients connect with test_client.h.
#pragma once

#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/daemon/busy_poll.h"
#include "server/daemon/service.h"
#include "server_test_support.h"
#include "test_client.h"

namespace ibat::server::test_support {

// ibatd's Service in a temp directory, its loop on a thread, the SA faked.
class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ibat-daemon-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Other users must reach the socket: the mode under test is the socket's own.
    std::filesystem::permissions(dir_, std::filesystem::perms::all);
    config_.server.socket = (dir_ / "ibatd.sock").string();
    config_.snapshot.cache_file.clear();
    config_.server.acm_socket.clear();  // off unless a test names its own (the default is the host's)
  }
  void TearDown() override {
    stop();
    std::filesystem::remove_all(dir_);
  }

  // Runs `f` on the loop thread and waits for it.
  template <class F>
  auto on_loop(F f) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(loop_, [&task] { task(); });
    return result.get();
  }
  // `may_administer` as Service takes it; empty: root or admin_group.
  void start(std::function<bool(const PeerCredentials&)> may_administer = {}) {
    service_ = std::make_unique<Service>(loop_, config_, sa_, std::move(may_administer));
    service_->start();
    service_->port(0).on_local_port(core::LocalPort{kLocalGid, core::Lid{1}, core::Lid{1}, true});
    run_loop();
  }
  // The daemon's form: these ports, each with the fabric `make_fabric` gives it.
  void start_ports(const std::vector<Service::PortSpec>& ports, Service::FabricFactory make_fabric) {
    service_ = std::make_unique<Service>(loop_, config_, ports, std::move(make_fabric));
    service_->start();
    run_loop();
  }
  // Runs the loop on its thread until stop(); start() calls it, a test of one part of the daemon
  // (no Service) calls it after setting that part up.
  void run_loop() {
    loop_.restart();
    work_.emplace(loop_.get_executor());
    thread_ = std::thread([this] { server::run_loop(loop_); });  // ibatd's loop, BusyPoll and all
  }
  void stop() {
    if (!thread_.joinable()) return;
    on_loop([this] { service_.reset(); });
    work_.reset();
    loop_.stop();
    thread_.join();
  }
  void answer(const core::PathQuery& q, std::uint16_t dlid) {
    on_loop([&] { service_->port(0).on_query_result(q.id, core::QueryResult{core::Error::ok, path_to(*q.dgid, dlid)}); });
  }
  // Resolves `dgid` once through the fake SA so that it is cached.
  void warm(Client& c, std::uint32_t id, const core::Gid& dgid, std::uint16_t dlid) {
    std::size_t index = sa_.count();
    c.resolve(id, dgid);
    answer(sa_.wait_query(index), dlid);
    EXPECT_EQ(c.status_of(id), protocol::Status::ok);
  }
  // The "server" section of STATS, read on the loop.
  struct ServerStats {
    std::uint64_t connections, connections_total, connections_refused, protocol_errors, slow_clients, denied;
    std::uint64_t acm_connections, acm_connections_total, acm_connections_refused, acm_slow_clients;
    std::uint64_t acm_errors, acm_protocol_errors, cut_over_ceiling, connections_refused_per_uid;
    std::uint64_t clients_pending, pending_refused_per_uid, cut_over_uid_share;
  };
  ServerStats server_counters() {
    nlohmann::json s = nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["server"];
    return ServerStats{s["connections"],     s["connections_total"],     s["connections_refused"],
                       s["protocol_errors"], s["slow_clients"],          s["denied"],
                       s["acm_connections"], s["acm_connections_total"], s["acm_connections_refused"],
                       s["acm_slow_clients"], s["acm_errors"],           s["acm_protocol_errors"],
                       s["cut_over_ceiling"],  s["connections_refused_per_uid"],
                       s["clients_pending"],   s["pending_refused_per_uid"], s["cut_over_uid_share"]};
  }

  std::filesystem::path dir_;
  DaemonConfig config_;
  FakeSa sa_;
  asio::io_context loop_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<Service> service_;
  std::thread thread_;
};

}  // namespace ibat::server::test_support
