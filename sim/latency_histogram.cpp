// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Log-linear latency histogram: see latency_histogram.h.
#include "sim/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ibat::sim {

std::size_t LatencyHistogram::index_of(std::uint64_t v) {
  constexpr std::uint64_t kSub = 1u << kSubBits;
  if (v < kSub) return static_cast<std::size_t>(v);
  const int msb = 63 - std::countl_zero(v);
  const int shift = msb - kSubBits;
  const std::uint64_t mantissa = (v >> shift) & (kSub - 1);
  return static_cast<std::size_t>((static_cast<std::uint64_t>(shift + 1) << kSubBits) + mantissa);
}

std::uint64_t LatencyHistogram::upper_bound_of(std::size_t index) {
  constexpr std::uint64_t kSub = 1u << kSubBits;
  if (index < kSub) return index;
  const int shift = static_cast<int>(index >> kSubBits) - 1;
  const std::uint64_t mantissa = (index & (kSub - 1)) | kSub;
  return ((mantissa + 1) << shift) - 1;
}

void LatencyHistogram::add(std::int64_t latency_ns, std::uint64_t weight) {
  const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(0, latency_ns));
  counts_[index_of(v)] += weight;
  count_ += weight;
  max_ns_ = std::max(max_ns_, latency_ns);
}

std::int64_t LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      return std::min(static_cast<std::int64_t>(upper_bound_of(i)), max_ns_);
    }
  }
  return max_ns_;
}

}  // namespace ibat::sim
