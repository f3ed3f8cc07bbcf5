// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Randomized property test: random interleavings of requests, query results, fabric and
// neighbour events, flushes, cancels and clock ticks. After every step a checker verifies:
// no request completes twice, nothing non-servable is served, queries in flight <=
// sa_max_inflight, at most one query per destination in flight; at the end every request has
// completed exactly once.
#include <map>
#include <random>

#include "test_support.h"

namespace ibat::core::testing {
namespace {

struct TrackingSink : QuerySink {
  void send_path_query(const PathQuery& q) override { open.emplace(q.id, q); }
  void cancel_query(QueryId id) override { open.erase(id); }
  std::map<QueryId, PathQuery> open;
};

class PropertyRun {
 public:
  explicit PropertyRun(std::uint64_t seed) : rng_(seed) {
    policy_.sa_max_inflight = 3;
    policy_.sa_rate = 50;
    policy_.sa_burst = 4;
    policy_.capacity = 6;
    policy_.max_waiters_per_key = 5;
    policy_.max_pending = 25;
    policy_.retry_base = 20ms;
    policy_.retry_max = 200ms;
    policy_.retry_count = 2;
    policy_.negative_ttl = 300ms;
    policy_.request_timeout = 500ms;
    policy_.revalidate_per_s = 50;
    policy_.revalidate_jitter = 50ms;
    policy_.path_ttl = 2s;
    policy_.provisional_ttl = 1s;
    resolver_ = std::make_unique<Resolver>(policy_, clock_, sink_, seed);
    resolver_->on_local_port(port_);
    resolver_->on_broadcast_params({Pkey{0xFFFF}, 4, 3, 0, 18});
  }

  void run(int steps) {
    for (int step = 0; step < steps; ++step) {
      one_random_step();
      check(step);
    }
    // Drain: answer everything, let every deadline pass, then shut down.
    resolver_->on_local_port({port_.gid, port_.lid, port_.sm_lid, true});
    for (int i = 0; i < 200; ++i) {
      answer_all();
      clock_.advance(50ms);
      resolver_->tick();
      check(steps + i);
    }
    resolver_->cancel_all();
    for (RequestId id = 1; id <= issued_; ++id) ASSERT_EQ(completions_[id], 1) << "request " << id;
    EXPECT_EQ(resolver_->stats().pending, 0u);
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  Gid gid(int n) { return remote_gid(static_cast<std::uint64_t>(n)); }
  // Destination n has LID 10 + n, unless the fabric renumbered (lid_shift_).
  std::uint16_t lid_of(int n) const { return static_cast<std::uint16_t>(10 + n + lid_shift_); }

  Completion callback() {
    return [this](RequestId id, const ResolveResult& r) {
      ++completions_[id];
      ASSERT_EQ(completions_[id], 1) << "request " << id << " completed twice";
      if (r.error == Error::ok) {
        ASSERT_TRUE(r.path.is_servable()) << "served a non-servable path, DLID " << r.path.dlid.value;
        ASSERT_NE(r.state, EntryState::resolving);
      }
      if (pick(10) == 0) issue_request();  // re-enter from inside a completion
    };
  }

  void issue_request() {
    ResolveRequest req;
    int n = 1 + pick(9);
    switch (pick(4)) {
      case 0: req.target = gid(n); break;
      case 1: req.target = Lid{lid_of(n)}; break;
      case 2: req.target = IpAddr::from_v4(0x0A000000u + static_cast<std::uint32_t>(n)); break;
      default: req.target = HwAddr::from(0x48, gid(n)); break;
    }
    if (pick(4) == 0) req.timeout = std::chrono::milliseconds(pick(300));
    req.force_sa = pick(12) == 0;
    req.cache_only = !req.force_sa && pick(12) == 0;
    ++issued_;  // ids are handed out 1, 2, 3 ... (a nested resolve may take one meanwhile)
    resolver_->resolve(req, callback());
  }

  PathRecord answer_for(const PathQuery& q) {
    int n = 0;
    for (int i = 1; i <= 9; ++i)
      if ((q.dgid && *q.dgid == gid(i)) || (q.dlid && q.dlid->value == lid_of(i))) n = i;
    PathRecord p = good_path(n ? gid(n) : q.dgid.value_or(gid(1)), lid_of(n ? n : 1), port_.lid.value);
    if (pick(8) == 0) p.dlid = Lid{0};  // an SM in the middle of a restart
    if (pick(20) == 0) p.mtu = 0;
    return p;
  }

  void answer_one(QueryId id) {
    PathQuery q = sink_.open.at(id);
    sink_.open.erase(id);
    int kind = pick(10);
    if (kind < 6) resolver_->on_query_result(id, ok_result(answer_for(q)));
    else if (kind < 8) resolver_->on_query_result(id, err_result(Error::timeout));
    else if (kind < 9) resolver_->on_query_result(id, err_result(Error::no_record));
    else resolver_->on_query_result(id, err_result(Error::unreachable));
  }

  void answer_all() {
    while (!sink_.open.empty()) {
      PathQuery q = sink_.open.begin()->second;
      sink_.open.erase(sink_.open.begin());
      resolver_->on_query_result(q.id, ok_result(good_path(q.dgid.value_or(gid(1)), lid_of(1), port_.lid.value)));
    }
  }

  void one_random_step() {
    switch (pick(24)) {
      case 0: case 1: case 2: case 3: case 4: case 5: issue_request(); break;
      case 6: case 7: case 8: case 9:
        if (!sink_.open.empty()) {
          auto it = sink_.open.begin();
          std::advance(it, pick(static_cast<int>(sink_.open.size())));
          answer_one(it->first);
        }
        break;
      case 10: case 11: case 12:
        clock_.advance(std::chrono::milliseconds(1 + pick(120)));
        resolver_->tick();
        break;
      case 13: resolver_->cancel(1 + rng_() % (issued_ + 1)); break;
      case 14: resolver_->on_sm_changed(); break;
      case 15:
        port_.lid = Lid{static_cast<std::uint16_t>(1 + pick(3))};
        resolver_->on_local_port(port_);
        break;
      case 16:
        port_.active = !port_.active;
        resolver_->on_local_port(port_);
        break;
      case 17:
        if (pick(2)) resolver_->on_gid_out_of_service(gid(1 + pick(9)));
        else resolver_->on_gid_in_service(gid(1 + pick(9)));
        break;
      case 18: {
        int n = 1 + pick(9);
        auto ip = IpAddr::from_v4(0x0A000000u + static_cast<std::uint32_t>(n));
        int g = pick(3) == 0 ? 1 + pick(9) : n;  // sometimes the IP moves to another GID
        std::optional<Lid> slid;
        if (pick(2)) slid = Lid{static_cast<std::uint16_t>(pick(4) == 0 ? 0 : lid_of(g))};
        resolver_->on_neighbour(ip, HwAddr::from(0x48, gid(g)), slid);
        break;
      }
      case 19: resolver_->on_neighbour_removed(IpAddr::from_v4(0x0A000000u + static_cast<std::uint32_t>(1 + pick(9)))); break;
      case 20:
        if (pick(3) == 0) resolver_->flush_all();
        else resolver_->flush(gid(1 + pick(9)));
        break;
      case 21: lid_shift_ = pick(3); break;
      case 22:
        if (pick(30) == 0) resolver_->cancel_all();
        break;
      default:
        if (pick(5) == 0) resolver_->load_stale(resolver_->entries());
        break;
    }
  }

  void check(int step) {
    ASSERT_LE(sink_.open.size(), policy_.sa_max_inflight) << "step " << step;
    std::set<std::pair<Gid, std::uint16_t>> keys;
    for (const auto& [id, q] : sink_.open) {
      auto key = std::make_pair(q.dgid.value_or(Gid{}), q.dlid.value_or(Lid{}).value);
      ASSERT_TRUE(keys.insert(key).second) << "two queries in flight for one key at step " << step;
    }
    Stats s = resolver_->stats();
    ASSERT_EQ(s.inflight, sink_.open.size()) << "step " << step;
    for (const auto& e : resolver_->entries()) {
      bool served = e.state == EntryState::valid || e.state == EntryState::stale || e.state == EntryState::provisional;
      if (served) {
        ASSERT_TRUE(e.path.is_servable()) << "step " << step;
      }
    }
  }

  std::mt19937_64 rng_;
  Policy policy_;
  ManualClock clock_;
  TrackingSink sink_;
  std::unique_ptr<Resolver> resolver_;
  LocalPort port_{port_gid(), Lid{1}, Lid{100}, true};
  RequestId issued_ = 0;
  std::map<RequestId, int> completions_;
  int lid_shift_ = 0;
};

TEST(ResolverProperty, RandomInterleavingsKeepEveryInvariant) {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    PropertyRun(seed).run(3000);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ibat::core::testing
