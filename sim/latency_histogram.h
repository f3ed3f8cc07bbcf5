// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Weighted latency histogram with log-linear buckets (32 sub-buckets per power of two, ~3% error),
// constant memory whatever the number of samples: enough for p50/p99/max of 10^10 resolves.
#pragma once

#include <array>
#include <cstdint>

namespace ibat::sim {

class LatencyHistogram {
 public:
  void add(std::int64_t latency_ns, std::uint64_t weight = 1);
  // Latency (ns) at quantile q in [0, 1], upper bound of its bucket (0 if empty).
  std::int64_t quantile(double q) const;
  std::int64_t max() const { return max_ns_; }
  std::uint64_t count() const { return count_; }

 private:
  static constexpr int kSubBits = 5;
  static constexpr std::size_t kBuckets = 64 << kSubBits;
  static std::size_t index_of(std::uint64_t v);
  static std::uint64_t upper_bound_of(std::size_t index);

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::int64_t max_ns_ = 0;
};

}  // namespace ibat::sim
