// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test doubles for the core tests: a QuerySink that records queries, servable path records,
// and a fixture holding a ManualClock, a Policy and a Resolver with an active local port.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/resolver.h"

namespace ibat::core::testing {

using namespace std::chrono_literals;

class FakeSink : public QuerySink {
 public:
  void send_path_query(const PathQuery& q) override {
    sent.push_back(q);
    open.insert(q.id);
  }
  void cancel_query(QueryId id) override {
    cancelled.insert(id);
    open.erase(id);
  }
  // GetTables are taken only when `tables` is set (as a FabricPort whose SA serves them).
  bool send_table_query(const TableQuery& q) override {
    if (!tables) return false;
    tables_sent.push_back(q);
    open.insert(q.id);
    return true;
  }
  // Size queries are taken only when `sizes` is set (a FabricPort that knows its SA).
  bool send_size_query(const SubnetSizeQuery& q) override {
    if (!sizes) return false;
    sizes_sent.push_back(q);
    return true;
  }
  // The table gate's probes are taken only when `probes` is set (a FabricPort that knows its SA).
  bool send_probe(const PathQuery& q) override {
    if (!probes) return false;
    probes_sent.push_back(q);
    open.insert(q.id);
    return true;
  }
  // The most recent query for a GID destination, if still open.
  std::optional<PathQuery> open_for(const Gid& dgid) const {
    for (auto it = sent.rbegin(); it != sent.rend(); ++it)
      if (it->dgid == dgid && open.contains(it->id)) return *it;
    return std::nullopt;
  }
  std::vector<PathQuery> sent;
  bool tables = false;
  std::vector<TableQuery> tables_sent;
  bool sizes = false;
  std::vector<SubnetSizeQuery> sizes_sent;
  bool probes = false;
  std::vector<PathQuery> probes_sent;
  std::set<QueryId> open;
  std::set<QueryId> cancelled;
};

inline Gid port_gid() { return Gid::from_parts(0xFE80'0000'0000'0000ULL, 0x0002'C903'0000'0001ULL); }
inline Gid remote_gid(std::uint64_t n) { return Gid::from_parts(0xFE80'0000'0000'0000ULL, 0x0002'C903'0010'0000ULL + n); }

inline PathRecord good_path(const Gid& dgid, std::uint16_t dlid, std::uint16_t slid = 1) {
  PathRecord p;
  p.dgid = dgid;
  p.sgid = port_gid();
  p.dlid = Lid{dlid};
  p.slid = Lid{slid};
  p.pkey = Pkey{0xFFFF};
  p.mtu = 4;
  p.rate = 3;
  p.sl = 2;
  p.pkt_life = 18;
  p.reversible = true;
  p.numb_path = 1;
  return p;
}

// Request options for the helpers below (designated initializers would trip -Wextra here).
inline ResolveRequest with_timeout(Duration d) { ResolveRequest r; r.timeout = d; return r; }
inline ResolveRequest forced() { ResolveRequest r; r.force_sa = true; return r; }
inline ResolveRequest cache_only() { ResolveRequest r; r.cache_only = true; return r; }
inline ResolveRequest with_pkey(Pkey k) { ResolveRequest r; r.pkey = k; return r; }

inline QueryResult ok_result(const PathRecord& p) { return {Error::ok, p}; }
inline QueryResult err_result(Error e) { return {e, PathRecord{}}; }

// Records every completion of every request; counts how often each request id completed.
struct Recorder {
  Completion callback() {
    return [this](RequestId id, const ResolveResult& r) {
      ++count[id];
      last[id] = r;
      order.push_back(id);
    };
  }
  int times(RequestId id) const {
    auto it = count.find(id);
    return it == count.end() ? 0 : it->second;
  }
  std::map<RequestId, int> count;
  std::map<RequestId, ResolveResult> last;
  std::vector<RequestId> order;
};

class ResolverTest : public ::testing::Test {
 protected:
  ResolverTest() { reset(); }

  // A new Resolver whose first port report has been handled (tick: the prefetch it asks for goes
  // out, or this sink declines it).
  void reset() {
    resolver = std::make_unique<Resolver>(policy, clock, sink, 42);
    resolver->on_local_port({port_gid(), Lid{1}, Lid{100}, true});
    resolver->tick();
  }
  RequestId resolve_gid(const Gid& g, ResolveRequest extra = {}) {
    extra.target = g;
    return resolver->resolve(extra, rec.callback());
  }
  RequestId resolve_target(Target t, ResolveRequest extra = {}) {
    extra.target = std::move(t);
    return resolver->resolve(extra, rec.callback());
  }
  void answer(const PathQuery& q, const PathRecord& p) { resolver->on_query_result(q.id, ok_result(p)); }
  void fail(const PathQuery& q, Error e) { resolver->on_query_result(q.id, err_result(e)); }
  void advance(Duration d) {
    clock.advance(d);
    resolver->tick();
  }
  // Advances in small steps, ticking at each, so that timers fire at (about) their time.
  void run_for(Duration total, Duration step = 1ms) {
    for (Duration t{0}; t < total; t += step) advance(step);
  }

  Policy policy;
  ManualClock clock;
  FakeSink sink;
  Recorder rec;
  std::unique_ptr<Resolver> resolver;
};

}  // namespace ibat::core::testing
