// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Pieces shared by ibatd's Service tests (service_test.cpp, security_*_test.cpp): GIDs on one
// subnet, a fake SA that records the queries the Service sends, and a received protocol frame.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/query_sink.h"
#include "protocol/frame.h"

namespace ibat::server::test_support {

using namespace std::chrono_literals;

inline const core::Gid kLocalGid = core::Gid::from_parts(0xfe80000000000000ULL, 0x1);
inline core::Gid gid(std::uint64_t n) { return core::Gid::from_parts(0xfe80000000000000ULL, n); }

// A valid path from the local port to `dgid` at `dlid`, as the fake SA answers it.
inline core::PathRecord path_to(const core::Gid& dgid, std::uint16_t dlid, bool reversible = true) {
  core::PathRecord p;
  p.sgid = kLocalGid;
  p.dgid = dgid;
  p.slid = core::Lid{1};
  p.dlid = core::Lid{dlid};
  p.mtu = 4;
  p.rate = 3;
  p.reversible = reversible;
  p.numb_path = 1;
  return p;
}

// The SA: records queries; the test answers them on the loop.
class FakeSa : public core::QuerySink {
 public:
  void send_path_query(const core::PathQuery& q) override {
    std::lock_guard lock(mutex_);
    queries_.push_back(q);
    changed_.notify_all();
  }
  core::PathQuery wait_query(std::size_t index) {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(changed_.wait_for(lock, 5s, [&] { return queries_.size() > index; })) << "no query " << index;
    return queries_.size() > index ? queries_[index] : core::PathQuery{};
  }
  std::size_t count() {
    std::lock_guard lock(mutex_);
    return queries_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<core::PathQuery> queries_;
};

struct Frame {
  protocol::FrameHeader header;
  std::vector<std::uint8_t> payload;
  std::string text() const { return std::string(payload.begin(), payload.end()); }
};

}  // namespace ibat::server::test_support
