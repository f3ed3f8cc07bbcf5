// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Service's ports while it runs (a CA added or removed): set_ports drops a port that is gone
// (what waited on it fails `unreachable`, its fabric is stopped, STATS no longer lists it, the other
// port is not touched) and opens one that appeared (a fabric made and started, its requests served);
// with no port at all every request fails `unreachable`; a port whose fabric cannot be opened is
// left out and the others go on.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "daemon_fixture.h"

namespace ibat::server {
namespace {

using test_support::Client;
using test_support::DaemonTest;
using test_support::FakeSa;

const core::Gid kGidA = core::Gid::from_parts(0xfe80000000000000ULL, 0xA1);
const core::Gid kGidB = core::Gid::from_parts(0xfe80000000000000ULL, 0xB1);
const core::Gid kRemote = core::Gid::from_parts(0xfe80000000000000ULL, 0x77);

// What the test sees of one fabric the Service made; it outlives the fabric.
struct FabricRecord {
  FakeSa sa;
  bool started = false;
  bool stopped = false;
};

class RecordedFabric final : public Service::PortFabric {
 public:
  explicit RecordedFabric(std::shared_ptr<FabricRecord> record) : record_(std::move(record)) {}
  core::QuerySink& sink() override { return record_->sa; }
  fabric::FabricStats stats() const override { return {}; }
  std::optional<core::LocalPort> opened_port() const override { return std::nullopt; }
  void start() override { record_->started = true; }
  void stop() override { record_->stopped = true; }

 private:
  std::shared_ptr<FabricRecord> record_;
};

class ServicePortsTest : public DaemonTest {
 protected:
  const Service::PortSpec a_{"mlx5_0", 1};
  const Service::PortSpec b_{"mlx5_1", 1};
  std::map<std::string, std::vector<std::shared_ptr<FabricRecord>>> made_;  // by port name, in order
  bool refuse_ = false;  // the next fabric cannot be opened

  Service::FabricFactory factory() {
    return [this](const Service::PortSpec& spec, fabric::FabricEvents) -> std::unique_ptr<Service::PortFabric> {
      if (refuse_) throw std::runtime_error("cannot open umad device of " + spec.name());
      auto record = std::make_shared<FabricRecord>();
      made_[spec.name()].push_back(record);
      return std::make_unique<RecordedFabric>(record);
    };
  }
  FabricRecord& latest(const Service::PortSpec& spec) { return *made_.at(spec.name()).back(); }
  // The port at `index` says it is active with `gid`.
  void report(std::size_t index, const core::Gid& gid) {
    on_loop([&] { service_->port(index).on_local_port(core::LocalPort{gid, core::Lid{1}, core::Lid{1}, true}); });
  }
  void set_ports(std::vector<Service::PortSpec> ports) {
    on_loop([&] { service_->set_ports(ports); });
  }
  std::size_t listed_ports() {
    return nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["ports"].size();
  }
  static void resolve_from(Client& c, std::uint32_t id, const core::Gid& sgid) {
    core::ResolveRequest r;
    r.target = kRemote;
    r.sgid = sgid;
    std::vector<std::uint8_t> out;
    protocol::append_resolve_request(out, id, r);
    ASSERT_TRUE(c.send(out));
  }
};

TEST_F(ServicePortsTest, AGonePortFailsWhatWaitedOnItAndAPortThatAppearsIsServed) {
  start_ports({a_, b_}, factory());
  ASSERT_TRUE(latest(a_).started && latest(b_).started);
  report(0, kGidA);
  report(1, kGidB);
  Client c(config_.server.socket);
  resolve_from(c, 1, kGidB);
  latest(b_).sa.wait_query(0);
  resolve_from(c, 2, kGidA);
  latest(a_).sa.wait_query(0);

  set_ports({a_});  // mlx5_1 was removed
  EXPECT_EQ(c.status_of(1), protocol::Status::unreachable) << "what waited on the gone port fails at once";
  EXPECT_TRUE(latest(b_).stopped);
  EXPECT_FALSE(latest(a_).stopped);
  EXPECT_EQ(listed_ports(), 1u);
  EXPECT_EQ(on_loop([this] { return service_->resolver(0).stats().pending; }), 1u) << "mlx5_0's request still waits";

  set_ports({a_, b_});  // it came back
  ASSERT_EQ(made_.at(b_.name()).size(), 2u) << "a fresh fabric for the port that appeared";
  EXPECT_TRUE(latest(b_).started);
  EXPECT_EQ(listed_ports(), 2u);
  report(1, kGidB);
  resolve_from(c, 3, kGidB);
  latest(b_).sa.wait_query(0);
  EXPECT_EQ(made_.at(a_.name()).size(), 1u) << "the port that stayed is not touched";
}

// `ibat ports` prints these of each port (cli's ports_table); a column the daemon does not send
// would print "-" on every host.
TEST_F(ServicePortsTest, EachPortCarriesEveryColumnIbatPortsShows) {
  start_ports({a_, b_}, factory());
  report(0, kGidA);
  report(1, kGidB);
  const nlohmann::json ports = nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["ports"];
  ASSERT_EQ(ports.size(), 2u);
  for (const nlohmann::json& p : ports) {
    for (const char* column :
         {"name", "state", "gid", "lid", "sm_lid", "subnet_prefix", "entries", "sa_queries", "sa_window", "default"})
      EXPECT_TRUE(p.contains(column)) << column << " in " << p.dump();
  }
}

TEST_F(ServicePortsTest, WithNoPortLeftEveryRequestFailsUnreachable) {
  start_ports({a_}, factory());
  report(0, kGidA);
  set_ports({});
  EXPECT_EQ(listed_ports(), 0u);
  Client c(config_.server.socket);
  resolve_from(c, 1, kGidA);
  EXPECT_EQ(c.status_of(1), protocol::Status::unreachable);
  c.resolve(2, kRemote);
  EXPECT_EQ(c.status_of(2), protocol::Status::unreachable);
  c.request(protocol::Op::stats, 3);
  EXPECT_FALSE(c.body(3).empty()) << "STATS still answers";
}

TEST_F(ServicePortsTest, APortThatCannotBeOpenedIsLeftOutAndTheOthersGoOn) {
  start_ports({a_}, factory());
  refuse_ = true;
  set_ports({a_, b_});
  EXPECT_EQ(listed_ports(), 1u);
  EXPECT_FALSE(made_.contains(b_.name()));
  refuse_ = false;
  set_ports({a_, b_});  // the next event finds it openable
  EXPECT_EQ(listed_ports(), 2u);
}

}  // namespace
}  // namespace ibat::server
